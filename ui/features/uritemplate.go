package features

import (
	"strconv"
	"strings"
)

// RFC 6570 URI templates, as resource templates use them: the variable
// names a form asks for, and the expansion of the values given. Every
// operator of level 3 is expanded (simple, +, #, ., /, ;, ?, &), with the
// prefix modifier (:N); explode (*) is read and treated as a single value,
// since a form gives one string per variable.

// expression is one {…} of a template.
type expression struct {
	op   byte // 0 for a simple expression
	vars []varSpec
}

type varSpec struct {
	name   string
	prefix int // 0: the whole value
}

// templateParts splits a template into literal text and expressions.
func templateParts(t string) (lits []string, exprs []expression) {
	for {
		i := strings.IndexByte(t, '{')
		j := strings.IndexByte(t[max(i, 0):], '}')
		if i < 0 || j < 0 {
			return append(lits, t), exprs
		}
		j += i
		lits = append(lits, t[:i])
		exprs = append(exprs, parseExpression(t[i+1:j]))
		t = t[j+1:]
	}
}

func parseExpression(s string) expression {
	var e expression
	if s != "" && strings.IndexByte("+#./;?&", s[0]) >= 0 {
		e.op, s = s[0], s[1:]
	}
	for _, v := range strings.Split(s, ",") {
		v = strings.TrimSuffix(strings.TrimSpace(v), "*")
		name, pre, _ := strings.Cut(v, ":")
		n, _ := strconv.Atoi(pre)
		if name != "" {
			e.vars = append(e.vars, varSpec{name: name, prefix: n})
		}
	}
	return e
}

// TemplateVars returns the variable names of template t, in order, once
// each.
func TemplateVars(t string) []string {
	var out []string
	seen := map[string]bool{}
	_, exprs := templateParts(t)
	for _, e := range exprs {
		for _, v := range e.vars {
			if !seen[v.name] {
				seen[v.name] = true
				out = append(out, v.name)
			}
		}
	}
	return out
}

// ExpandTemplate fills template t with values; a variable without a value
// (or with an empty one, for the operators that drop empty values) is left
// out as RFC 6570 says.
func ExpandTemplate(t string, values map[string]string) string {
	lits, exprs := templateParts(t)
	var b strings.Builder
	for i, lit := range lits {
		b.WriteString(lit)
		if i < len(exprs) {
			b.WriteString(expand(exprs[i], values))
		}
	}
	return b.String()
}

func expand(e expression, values map[string]string) string {
	first, sep, named, ifEmpty, reserved := "", ",", false, "", false
	switch e.op {
	case '+':
		reserved = true
	case '#':
		first, reserved = "#", true
	case '.':
		first, sep = ".", "."
	case '/':
		first, sep = "/", "/"
	case ';':
		first, sep, named = ";", ";", true
	case '?':
		first, sep, named, ifEmpty = "?", "&", true, "="
	case '&':
		first, sep, named, ifEmpty = "&", "&", true, "="
	}
	var parts []string
	for _, v := range e.vars {
		val, ok := values[v.name]
		if !ok {
			continue
		}
		if v.prefix > 0 && len([]rune(val)) > v.prefix {
			val = string([]rune(val)[:v.prefix])
		}
		enc := encode(val, reserved)
		switch {
		case !named:
			parts = append(parts, enc)
		case val == "":
			parts = append(parts, v.name+ifEmpty)
		default:
			parts = append(parts, v.name+"="+enc)
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return first + strings.Join(parts, sep)
}

// encode percent-encodes s: everything but unreserved characters, or (for
// + and #) everything but unreserved and reserved characters.
func encode(s string, reserved bool) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', strings.IndexByte("-._~", c) >= 0:
			b.WriteByte(c)
		case reserved && strings.IndexByte(":/?#[]@!$&'()*+,;=%", c) >= 0:
			b.WriteByte(c)
		default:
			b.WriteString("%" + strings.ToUpper(strconv.FormatUint(uint64(c)>>4, 16)+strconv.FormatUint(uint64(c)&15, 16)))
		}
	}
	return b.String()
}
