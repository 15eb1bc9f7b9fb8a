package hostconfig

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// dialect says which variable references a host expands.
type dialect struct {
	envColon bool // ${env:NAME}
	bare     bool // ${NAME} and ${NAME:-default} (Claude Code)
	editor   bool // ${userHome}, ${workspaceFolder}, ${workspaceFolderBasename}, ${pathSeparator}, ${/}
	input    bool // ${input:ID} (VS Code)
	dollar   bool // $NAME too (Gemini CLI), with bare's ${NAME}
	braceEnv bool // {env:NAME} (opencode)
}

// Prompter asks the user for the value of an input. Tests answer it.
//
// For a pickString with options (Input.IsChoice), the answer is one of
// the option values, or "" for the default. A Prompter that has no way
// to ask returns an error wrapping ErrCannotAsk: the input's default is
// then taken, and without one the input fails with ErrNoValue.
type Prompter interface {
	Prompt(in Input) (string, error)
}

// Env is what variable references resolve against.
type Env struct {
	// Lookup reads an environment variable (os.LookupEnv).
	Lookup func(name string) (string, bool)
	// Home is ${userHome}.
	Home string
	// Workspace is ${workspaceFolder}, and the folder a relative envFile
	// is read from: the project folder (sonde's working directory).
	Workspace string
	// Inputs are values given for ${input:ID} (sonde's --input ID=VALUE),
	// used without asking. A pickString's value must be one of its
	// options.
	Inputs map[string]string
	// Prompter answers the other ${input:ID}. When nil, inputs are only
	// checked (the id must be in the file's "inputs", a given value must
	// fit, and an input sonde cannot ask for must have a given value):
	// their values are left empty.
	Prompter Prompter
}

// Resolve returns s with its variable references expanded in the command,
// args, env values, envFile, cwd, URL and header values, and with the
// variables of its envFile added to Env (the entry's own env wins). Each
// input is asked for once. A reference that cannot be resolved is a
// *Problem wrapping ErrReference; references a host does not know are
// left as written, as the host leaves them. An input that gets no usable
// value is an *InputError inside that Problem. The values that came from
// outside the file are kept for Secrets: those of environment variables
// (at least MinSecretLen bytes long), of inputs other than a pickString's
// choice, and of password inputs whatever their length.
func (s Server) Resolve(env Env) (Server, error) {
	r := resolver{s: &s, env: env, answers: map[string]string{}}
	out := s
	out.Command = r.expand("command", s.Command)
	out.Args = make([]string, len(s.Args))
	for i, a := range s.Args {
		out.Args[i] = r.expand(fmt.Sprintf("args[%d]", i), a)
	}
	out.EnvFile = r.expand("envFile", s.EnvFile)
	out.Cwd = r.expand("cwd", s.Cwd)
	out.URL = r.expand("url", s.URL)
	out.Env = nil
	if out.EnvFile != "" && r.err == nil {
		vars, err := readEnvFile(out.EnvFile, env.Workspace)
		if err != nil {
			r.fail(fmt.Errorf("%w: envFile: %w", ErrReference, err))
		}
		out.Env = vars
	}
	for _, k := range s.EnvNames() {
		if out.Env == nil {
			out.Env = map[string]string{}
		}
		out.Env[k] = r.expand("env."+k, s.Env[k])
	}
	out.Headers = nil
	for _, k := range s.HeaderNames() {
		if out.Headers == nil {
			out.Headers = map[string]string{}
		}
		out.Headers[k] = r.expand("headers."+k, s.Headers[k])
	}
	if r.err != nil {
		return Server{}, &Problem{File: s.File, Server: s.Name, Err: r.err}
	}
	out.secrets = r.secrets
	return out, nil
}

// resolver expands the references of one server; the first error is kept.
type resolver struct {
	s       *Server
	env     Env
	answers map[string]string // input id -> value
	secrets []string          // values that came from outside the file (Secrets)
	err     error
}

// MinSecretLen is the shortest value of an environment variable or input
// that Secrets holds (a password input's is held whatever its length):
// shorter values ("1", "on", "dev") would be hidden everywhere they occur
// and tell nothing. capture.MinSecretLen is the same rule for captures.
const MinSecretLen = 4

// keep adds v to the secrets (once) when it is long enough, or always
// when always is set (a password input's value).
func (r *resolver) keep(v string, always bool) {
	if v == "" || (!always && len(v) < MinSecretLen) {
		return
	}
	for _, s := range r.secrets {
		if s == v {
			return
		}
	}
	r.secrets = append(r.secrets, v)
}

func (r *resolver) fail(err error) {
	if r.err == nil {
		r.err = err
	}
}

// expand replaces the references in text (the value of field).
func (r *resolver) expand(field, text string) string {
	if r.s.dialect.dollar {
		text = r.expandDollar(field, text)
	}
	if r.s.dialect.braceEnv {
		text = r.expandBraceEnv(field, text)
	}
	if !strings.Contains(text, "${") {
		return text
	}
	var b strings.Builder
	for {
		i := strings.Index(text, "${")
		if i < 0 {
			b.WriteString(text)
			return b.String()
		}
		j := strings.IndexByte(text[i:], '}')
		if j < 0 {
			b.WriteString(text)
			return b.String()
		}
		b.WriteString(text[:i])
		ref := text[i+2 : i+j]
		v, ok, err := r.lookup(ref)
		switch {
		case err != nil:
			r.fail(fmt.Errorf("%w: %s: ${%s}: %w", ErrReference, field, ref, err))
		case ok:
			b.WriteString(v)
		default:
			b.WriteString(text[i : i+j+1])
		}
		text = text[i+j+1:]
	}
}

// expandDollar replaces Gemini CLI's $NAME references (a name of letters,
// digits and '_' right after a '$' not followed by '{'); ${NAME} is left to
// expand. An unset variable is an error, as for ${NAME}.
func (r *resolver) expandDollar(field, text string) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(text, '$')
		if i < 0 || i+1 >= len(text) {
			b.WriteString(text)
			return b.String()
		}
		j := i + 1
		for j < len(text) && (text[j] == '_' || 'a' <= text[j]|0x20 && text[j]|0x20 <= 'z' || '0' <= text[j] && text[j] <= '9') {
			j++
		}
		if j == i+1 {
			b.WriteString(text[:i+1])
			text = text[i+1:]
			continue
		}
		b.WriteString(text[:i])
		r.envValue(&b, field, text[i+1:j], text[i:j])
		text = text[j:]
	}
}

// expandBraceEnv replaces opencode's {env:NAME} references. An unset
// variable is an error, as for ${env:NAME}.
func (r *resolver) expandBraceEnv(field, text string) string {
	var b strings.Builder
	for {
		i := strings.Index(text, "{env:")
		j := strings.IndexByte(text[max(i, 0):], '}')
		if i < 0 || j < 0 {
			b.WriteString(text)
			return b.String()
		}
		b.WriteString(text[:i])
		ref := text[i : i+j+1]
		r.envValue(&b, field, ref[len("{env:"):len(ref)-1], ref)
		text = text[i+j+1:]
	}
}

// envValue writes the value of environment variable name, which ref
// (the text as written) refers to, or ref itself with an error when it is
// not set.
func (r *resolver) envValue(b *strings.Builder, field, name, ref string) {
	v, ok := "", false
	if r.env.Lookup != nil {
		v, ok = r.env.Lookup(name)
	}
	if !ok {
		r.fail(fmt.Errorf("%w: %s: %s: environment variable %s is not set", ErrReference, field, ref, name))
		b.WriteString(ref)
		return
	}
	r.keep(v, false)
	b.WriteString(v)
}

// lookup resolves one reference (the text between "${" and "}"); ok is
// false for a reference the dialect does not know (left as written).
func (r *resolver) lookup(ref string) (v string, ok bool, err error) {
	d, env := r.s.dialect, r.env
	getenv := func(name string) (string, bool) {
		if env.Lookup == nil {
			return "", false
		}
		return env.Lookup(name)
	}
	if name, found := strings.CutPrefix(ref, "env:"); found && d.envColon {
		if v, set := getenv(name); set {
			r.keep(v, false)
			return v, true, nil
		}
		return "", false, fmt.Errorf("environment variable %s is not set", name)
	}
	if id, found := strings.CutPrefix(ref, "input:"); found && d.input {
		v, err := r.input(id)
		return v, err == nil, err
	}
	if d.editor {
		switch ref {
		case "userHome":
			return env.Home, true, nil
		case "workspaceFolder":
			return env.Workspace, true, nil
		case "workspaceFolderBasename":
			return filepath.Base(env.Workspace), true, nil
		case "pathSeparator", "/":
			return string(filepath.Separator), true, nil
		}
	}
	if d.bare {
		name, def, hasDef := strings.Cut(ref, ":-")
		if !isName(name) {
			return "", false, nil
		}
		if v, set := getenv(name); set {
			r.keep(v, false)
			return v, true, nil
		}
		if hasDef {
			return def, true, nil
		}
		return "", false, fmt.Errorf("environment variable %s is not set and has no default (${%s:-default})", name, name)
	}
	return "", false, nil
}

// input returns the value of ${input:id}, found once per Resolve: the
// value given in Env.Inputs, else the Prompter's answer (an empty answer,
// or no way to ask, takes the input's default).
func (r *resolver) input(id string) (string, error) {
	if v, ok := r.answers[id]; ok {
		return v, nil
	}
	in, ok := r.s.input(id)
	if !ok {
		return "", fmt.Errorf("no input with id %q in the file's \"inputs\"", id)
	}
	v, err := r.value(in)
	if err != nil {
		return "", err
	}
	if r.env.Prompter == nil && !r.given(id) {
		return "", nil // only checked
	}
	r.answers[id] = v
	// A pickString's choice is one of the values the file lists; any
	// other input's value came from the user (or is a password's).
	if in.Password || !in.IsChoice() {
		r.keep(v, in.Password)
	}
	return v, nil
}

// given reports whether Env.Inputs has a value for id.
func (r *resolver) given(id string) bool {
	_, ok := r.env.Inputs[id]
	return ok
}

// value finds the value of one input.
func (r *resolver) value(in Input) (string, error) {
	if v, ok := r.env.Inputs[in.ID]; ok {
		if !in.allows(v) {
			return "", &InputError{Input: in, Err: ErrNotAnOption, Value: v, Given: true}
		}
		return v, nil
	}
	if !in.CanAsk() {
		return "", &InputError{Input: in, Err: ErrInputType}
	}
	if r.env.Prompter == nil {
		return "", nil
	}
	v, err := r.env.Prompter.Prompt(in)
	switch {
	case errors.Is(err, ErrCannotAsk):
		if in.Default == "" {
			return "", &InputError{Input: in, Err: ErrNoValue, Cause: err}
		}
		return in.Default, nil
	case err != nil:
		return "", &InputError{Input: in, Err: err}
	}
	if v == "" {
		v = in.Default
	}
	if !in.allows(v) {
		return "", &InputError{Input: in, Err: ErrNotAnOption, Value: v}
	}
	return v, nil
}

// isName reports whether s is an environment variable name.
func isName(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		if c != '_' && !('a' <= c && c <= 'z') && !('A' <= c && c <= 'Z') && (i == 0 || c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// readEnvFile reads a .env file (relative to dir): KEY=VALUE lines, blank
// lines and # comments skipped, an optional "export " prefix, values in
// single or double quotes taken as written inside them.
func readEnvFile(file, dir string) (map[string]string, error) {
	if !filepath.IsAbs(file) && dir != "" {
		file = filepath.Join(dir, file)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	vars := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		line = strings.TrimPrefix(line, "export ")
		k, v, ok := strings.Cut(line, "=")
		k = strings.TrimSpace(k)
		if !ok || !isName(k) {
			return nil, fmt.Errorf("%s: line %d: want KEY=VALUE", file, n)
		}
		v = strings.TrimSpace(v)
		if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
			v = v[1 : len(v)-1]
		} else if i := strings.Index(v, " #"); i >= 0 {
			v = strings.TrimSpace(v[:i])
		}
		vars[k] = v
	}
	return vars, sc.Err()
}
