// Package tap is the command family of `sonde tap`: the stdio shim a host
// launches instead of an MCP server, recording what the host and the
// server say to each other (the core is the top-level package tap). It
// never imports the other families.
package tap

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/sonde-mcp/sonde/capture"
	"github.com/sonde-mcp/sonde/chaos"
	"github.com/sonde-mcp/sonde/client"
	"github.com/sonde-mcp/sonde/hostconfig"
	"github.com/sonde-mcp/sonde/internal/cli/cmdutil"
	"github.com/sonde-mcp/sonde/internal/cli/connect"
	"github.com/sonde-mcp/sonde/internal/paths"
	"github.com/sonde-mcp/sonde/sessions"
	coretap "github.com/sonde-mcp/sonde/tap"
	"github.com/sonde-mcp/sonde/transport"
)

// recordBuffer is how many events the recording may fall behind by (the
// recorder's subscription; capture.DefaultBuffer is 65,536): with the
// observer's queue (tap.DefaultQueueBytes), what bounds the tap's memory
// whatever the session's length.
const recordBuffer = 32768

// recordFlush is how long the recording's events may wait in its buffer
// before they are written to the file (capture.Options.FlushAfter): one
// write for the events of many calls, rather than one for each, takes less
// of the CPU the forwarding needs. sonde watch looks at the file every
// watchPoll, so a watcher sees them at most this much later.
const recordFlush = 50 * time.Millisecond

// Options are the flags of `sonde tap`.
type Options struct {
	Label        string
	Record       string
	NoRecord     bool
	Redact       []string
	RedactEnv    []string
	MaxLineBytes int
	// Listen, Target, AllowRemote, AllowOrigins: the HTTP tap (--listen
	// ADDR --target URL [--allow-remote] [--allow-origin ORIGIN...]).
	Listen       string
	Target       string
	AllowRemote  bool
	AllowOrigins []string
	// SessionIdle, MaxSessions: --session-idle, --max-sessions (the HTTP
	// tap's recordings of sessions).
	SessionIdle time.Duration
	MaxSessions int
	// Faults, FaultsFile, Seed: --fault RULE (repeatable), --faults FILE,
	// --seed N (docs/chaos.md); SeedSet says --seed was given.
	Faults     []string
	FaultsFile string
	Seed       uint64
	SeedSet    bool
	// SessionsDir overrides the sessions folder (tests); "" is
	// paths.Current().Sessions.
	SessionsDir string
	// Signals are passed on to the server; nil means the process's own
	// (signal.Notify, see signals_*.go).
	Signals <-chan os.Signal
	// OTLP: --otlp-endpoint and the rest (otlp.go).
	OTLP connect.OTLPFlags
	// Break: --break, --breaks, --break-timeout (breaks.go; stdio).
	Break BreakOptions
}

// tapLong is sonde tap --help's text.
const tapLong = `sonde tap is what a host (Claude Desktop, Claude Code, Cursor, VS Code…) launches instead
of an MCP server over stdio: it starts COMMAND (no shell) and forwards bytes verbatim, the
host's stdin to the server's stdin, the server's stdout to the host, the server's stderr to
the host's stderr. Nothing is reframed, re-encoded, capped, added, dropped, reordered or
held back: each chunk is written on as soon as it is read. The server gets the tap's
environment unchanged (it is the host's), with SONDE_SERVER_MARK added (by which sonde finds
what the server leaves behind).

Meanwhile sonde watches a copy of the bytes: each direction is split into lines and
decoded, both sides' requests are tracked by id (the host's and the server's), and the
session is recorded as a capture that sonde replay, lint, stats and export read: frames
with the client's verdicts (resolved, error, duplicate, unknown, late after a
cancellation, malformed for a line that is not JSON, too-long past --max-line-bytes, which
caps only what is decoded, never what is forwarded), request lifecycles, stderr, process
start and exit. When watching falls behind, forwarding is never slowed: what was not
watched is counted and recorded as missed.

  sonde tap --label github -- npx -y @modelcontextprotocol/server-github
  sonde tap --record session.jsonl -- ./my-server --flag

In a host's config, replace the server's command by sonde and put "tap", "--label",
NAME, "--" and the original command and arguments in front of its args.

Fault rules (stdio and --listen, docs/chaos.md): --fault RULE (repeatable) and --faults FILE (one
rule a line, # comments) make the server misbehave on purpose, for the frames a rule matches.
A rule is action:match,options:
  delay:to-host,method=tools/call,ms=3000   drop:to-host,method=notifications/progress,p=0.5
  duplicate:to-host,kind=response,every=5   corrupt:to-host,tool=search,how=string-id
  error:to-server,tool=delete,code=-32603,message=boom   noise:to-host   stderr:text=T
Actions: delay (ms=N or LO-HI; later frames of that direction wait behind it), drop,
duplicate (n=, ms=), corrupt (how=truncate, break-json, string-id, result-and-error), error
(answer a request instead of forwarding it), noise (a non-JSON line to the host), stderr,
reorder (window=N, ms=T, order=reverse|random: hold N frames, release them reversed),
stall (ms=: the frame, then nothing that way for a while), close (end the stream there).
Match: to-server or to-host, request/response/notification, method=, tool= (a response
matches through its request), id=, after=N, every=N, p= (draws from --seed N),
during=5s-30s. The two
directions then go a whole line at a time; a frame no rule changes keeps its exact bytes. The
recording holds what the host sent and received, and a note for each rule that fired (sonde
lint shows them). A bad rule is a usage error naming the rule and the character.
Over HTTP a frame is one message: a POST's body to the server, a JSON answer or one SSE
event's data to the host. A dropped request's answer never comes (the POST gets an SSE
stream with no event); duplicates to the server are extra POSTs; several messages for the
host (duplicate, noise) turn a JSON answer into an SSE stream; close to-server ends the
session (404 from then on), to-host ends the stream; reorder holds answers to-host.

Breakpoints (stdio and --listen, docs/breakpoints.md): --break QUERY (repeatable; the filter language,
docs/filter.md, judged as --filter judges a frame: an answer by its request, dir:in from the
server, dir:out to it) and --breaks FILE hold the frames that match, under handles h1, h2…,
until sonde breaks releases (in the order given), edits, drops or answers them, or
--break-timeout passes (default 20s; 0 holds until told): then they go on unchanged.
  sonde tap --break 'dir:in kind:response tool:search' -- ./server
  sonde breaks            sonde breaks edit h1 --json answer.json        sonde breaks release h2 h1
A held frame never holds back the others; frames no breakpoint matches keep their exact bytes.
Breakpoints need the session's socket (recording in the sessions folder); sonde breaks add
works on a tap started without --break. With --fault too, breakpoints come first. Over
--listen a frame is a POST's message, a JSON answer or one SSE event (a held event does not
hold back its stream); a dropped request's POST gets 504 once --break-timeout passed again.

Over HTTP (Streamable HTTP, or the legacy HTTP+SSE transport), sonde tap is a reverse
proxy instead: --listen ADDR --target URL, no command. It listens on ADDR and sends each
request to the same path and query on URL's host: the host's requests, the server's
responses and SSE streams go through unchanged and unbuffered (each read written on and
flushed at once: an SSE event reaches the host as soon as the server sent it), with their
headers (Mcp-Session-Id, MCP-Protocol-Version, Last-Event-ID, Authorization and the rest;
the proxy drops only the hop-by-hop ones and sends the server its own Host). Redirects go to
the host as they are. One change: a legacy "endpoint" event whose URL names the server's
origin, however it is spelled (read as the host's URL parser reads it: //host:port/…,
backslashes, several data lines, after comments), is rewritten to the proxy's (path and query
kept), so the host's POSTs come back through the tap; one naming another origin is noted. It prints the URL to give the host ("listening on URL") and runs until
SIGINT or SIGTERM (requests in flight get 2s to finish, then the recording is closed).

  sonde tap --listen 127.0.0.1:8808 --target https://mcp.example.com/mcp --label example

In the host's config, replace the server's URL by the printed one (the target's path on the
proxy: http://127.0.0.1:8808/mcp). ADDR must be loopback (127.0.0.1, ::1, localhost; a port
alone means 127.0.0.1:PORT; port 0 picks a free one), and requests whose Host is not
loopback get 403 (DNS rebinding); --allow-remote lifts both, with a warning: anyone who can
reach ADDR can then use the server with whatever credentials the host sends. A request with
an Origin header (a web page in a browser) that is not loopback gets 403 too, "null" included,
with or without --allow-remote; --allow-origin ORIGIN (repeatable, e.g.
https://inspector.example) forwards that page's requests. Hosts that are not browsers send no
Origin, and are forwarded. The recording
has the HTTP exchanges (method, status, headers, with the values of Authorization,
Proxy-Authorization, Cookie, Set-Cookie and of headers and query parameters named like
secrets replaced by «redacted»), and the messages of both sides with their stream ("POST 3",
"GET 1", "SSE" for the legacy stream) and SSE event ids; a body with Content-Encoding
gzip or deflate is forwarded as it came and a copy decoded for the recording (one that
decodes past --max-line-bytes is recorded as too long; other codings are not decoded). In
the sessions folder, each HTTP session (Mcp-Session-Id) is a recording of its own (LABEL-1,
LABEL-2…, from its initialize), and LABEL keeps what belongs to no session; a session the host
ends (DELETE) has its recording closed, and so has one idle past --session-idle (default 10m,
no request in flight), and, past --max-sessions open (default 1024), the one idle the longest
(said on stderr and in the recordings; a host that comes back is recorded anew); with --record
FILE, one recording holds every session (two at once that use the same request ids confuse
its verdicts).

Recording: to --record FILE (a new file, mode 0600), else to a new file in the sessions
folder, named LABEL-TIME-PID.jsonl (folder mode 0700, files 0600):
  Linux     $XDG_STATE_HOME/sonde/sessions (default ~/.local/state/sonde/sessions)
  macOS     ~/Library/Application Support/sonde/sessions
  Windows   %LOCALAPPDATA%\sonde\sessions
  anywhere  $SONDE_HOME/sessions when SONDE_HOME is set
The server gets the tap's environment (the host's) unchanged. In the recording, the values of
its variables whose names say they hold a secret (a part TOKEN, SECRET, PASSWORD, PASSWD,
PASS, KEY, APIKEY, CREDENTIAL(S), AUTH, COOKIE, PAT or PRIVATE, between underscores:
GITHUB_PERSONAL_ACCESS_TOKEN, OPENAI_API_KEY) are replaced with «redacted», as are those of
--redact-env NAME and the matches of --redact REGEX. If the
recording cannot be written, sonde tap still forwards, and says why once on stderr.

Signals: SIGINT, SIGTERM and SIGHUP sent to the tap go to the server's process group (on
Windows, Ctrl-C, Ctrl-Break and a closed console go to the server as CTRL_BREAK_EVENT).
The host's end of stdin closes the server's stdin. When the server exits, what it left in
its process group (and, on Linux, what left the group but carries its mark or holds its
pipes) is stopped, as in a session sonde drives.

Exit status (stdio): the server's: its exit code, or 128 plus the signal's number when a signal
ended it; 2 for a usage error; 7 (MCP_SPAWN) when the server could not be started.
Over HTTP: 0 after SIGINT or SIGTERM; 2 for a usage error; 7 when ADDR cannot be listened on.`

// NewCmdTap is `sonde tap [flags] -- COMMAND [ARG...]`.
func NewCmdTap(env *cmdutil.Env) *cobra.Command {
	var o Options
	cmd := &cobra.Command{
		Use:   "tap [--label NAME] [--record FILE] (-- COMMAND [ARG...] | --listen ADDR --target URL)",
		Short: "Sit between a host and a server (stdio, or HTTP with --listen), forwarding every byte and recording the session",
		Long:  tapLong,
		Args: func(cmd *cobra.Command, args []string) error {
			if o.Listen != "" || o.Target != "" {
				if len(args) > 0 {
					return cmdutil.Usagef("tap --listen forwards to --target URL: no command after it")
				}
				return nil
			}
			if cmd.ArgsLenAtDash() != 0 || len(args) == 0 {
				return cmdutil.Usagef("tap needs the server command after -- (sonde tap [--label NAME] -- COMMAND [ARG...])")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			o.SeedSet = cmd.Flags().Changed("seed")
			if o.Listen != "" || o.Target != "" {
				return RunListen(env, &o)
			}
			return Run(env, &o, args)
		},
	}
	o.addFlags(cmd.Flags())
	return cmd
}

// addFlags registers sonde tap's flags on f, into o.
func (o *Options) addFlags(f *pflag.FlagSet) {
	f.StringVar(&o.Label, "label", "", "a name for the session, in its file name (default: the command's base name, or the --target host)")
	f.StringVar(&o.Record, "record", "", "record to FILE (a new file) instead of the sessions folder")
	f.BoolVar(&o.NoRecord, "no-record", false, "record nothing (forward only)")
	f.StringArrayVar(&o.Redact, "redact", nil, "in the recording, replace what matches REGEX with «redacted» (repeatable)")
	f.StringArrayVar(&o.RedactEnv, "redact-env", nil, "in the recording, replace the value of environment variable NAME with «redacted» (repeatable)")
	f.IntVar(&o.MaxLineBytes, "max-line-bytes", transport.DefaultMaxLineBytes, "decode lines (HTTP: bodies and SSE events) up to this size; a longer one is still forwarded whole, and recorded as too long")
	f.StringVar(&o.Listen, "listen", "", "HTTP tap: listen on ADDR (host:port, or a port alone for 127.0.0.1:PORT; loopback unless --allow-remote) as a reverse proxy to --target")
	f.StringVar(&o.Target, "target", "", "HTTP tap: the server's URL (Streamable HTTP endpoint, or legacy SSE URL)")
	f.BoolVar(&o.AllowRemote, "allow-remote", false, "HTTP tap: allow a --listen address that is not loopback, and requests whose Host is not loopback")
	f.DurationVar(&o.SessionIdle, "session-idle", 10*time.Minute, "HTTP tap: close the recording of a session nothing went by in for this long, no request in flight (0: never)")
	f.IntVar(&o.MaxSessions, "max-sessions", coretap.DefaultMaxSessions, "HTTP tap: recordings of sessions open at once; a new one past it closes the one idle the longest")
	f.StringArrayVar(&o.AllowOrigins, "allow-origin", nil, "HTTP tap: also forward requests from web pages of ORIGIN (scheme://host[:port]; repeatable); other non-loopback Origins get 403")
	f.StringArrayVar(&o.Faults, "fault", nil, "inject a fault, RULE = action:match,options, e.g. drop:to-host,kind=response,every=3 (repeatable; each value has a limit, e.g. n= 1000 copies, ms= 1h: docs/chaos.md)")
	f.StringVar(&o.FaultsFile, "faults", "", "read fault rules from FILE, one a line ('#' starts a comment)")
	f.Uint64Var(&o.Seed, "seed", 0, "the seed of the fault rules' draws (p=, ms=LO-HI); default: a new one each run, written in the recording")
	o.Break.register(f)
	o.OTLP.Register(f)
	f.Bool(strings.TrimPrefix(hostconfig.WrapMarker, "--"), false, "marks a host config entry that sonde wrap wrote (sonde unwrap --all changes only those); nothing else")
	_ = f.MarkHidden(strings.TrimPrefix(hostconfig.WrapMarker, "--"))
}

// noteFaults writes the fault rules at the start of the recording.
func noteFaults(obs *client.Observer, faults *chaos.Engine) {
	if obs == nil || faults == nil {
		return
	}
	for _, r := range faults.Rules() {
		obs.Note(fmt.Sprintf("fault rule %d: %s", r.N, r.Text), time.Now())
	}
	obs.Note(fmt.Sprintf("fault rules on (--seed %d): frames are recorded as the host sent and received them", faults.Seed()), time.Now())
}

// faultEngine parses --fault and --faults into an engine (nil when there
// are none). A bad rule is a usage error naming it and where it is wrong.
func faultEngine(o *Options) (*chaos.Engine, error) {
	e, err := chaos.Load(o.Faults, o.FaultsFile, o.Seed, o.SeedSet)
	if err != nil {
		return nil, cmdutil.Usagef(err.Error())
	}
	return e, nil
}

// Run taps args (the server's argv) on env's streams.
func Run(env *cmdutil.Env, o *Options, argv []string) error {
	red, faults, err := common(o)
	if err != nil {
		return err
	}
	breaks, err := breaksOf(&o.Break)
	if err != nil {
		return err
	}
	defer breaks.Close()
	tel, err := startTelemetry(o, red)
	if err != nil {
		return err
	}
	label := o.Label
	if label == "" {
		label = strings.TrimSuffix(filepath.Base(argv[0]), filepath.Ext(argv[0]))
	}

	signals, stopSignals := o.Signals, func() {}
	if signals == nil {
		signals, stopSignals = notifySignals()
	}
	defer stopSignals()

	obs, rec, recPath := startRecording(env, o, label, capture.Options{Transport: "stdio", Command: argv, Redact: red},
		sessionNote(label, os.Getpid(), os.Getppid()))
	obs = observe(tel, obs)
	noteFaults(obs, faults)
	var inj *coretap.Injector
	var brk *coretap.Breaks
	if recPath != "" && o.Record == "" {
		// A live session in the sessions folder takes sonde inject's
		// requests through a socket beside its recording (with fault
		// rules, sonde faults' instead), and sonde breaks' always: its
		// breakpoints (--break, or added later) hold frames.
		brk = breaks
		ctl := &control{faults: faults, obs: obs, breaks: brk.Engine}
		if faults == nil {
			inj = coretap.NewInjector()
			ctl.inj = inj
		}
		if stop := serveInjector(ctl, socketPath(recPath), env.Err); stop != nil {
			defer stop()
		} else {
			inj, brk = nil, nil
		}
	}
	if brk == nil && o.Break.given() {
		fmt.Fprintln(env.Err, "sonde tap: no socket for sonde breaks (a session recorded in the sessions folder has one): the breakpoints are off")
	}
	if brk != nil {
		noteBreaks(obs, brk.Engine)
	}
	ended, _, err := coretap.Run(coretap.Options{
		Argv: argv, Observer: obs, MaxLineBytes: o.MaxLineBytes, Signals: signals, Faults: faults, Injector: inj, Breaks: brk,
	}, env.In, env.Out, env.Err)
	if err != nil && obs != nil {
		err = obs.SpawnFailed(err, time.Now())
	}
	endObservation(env, obs, rec, recPath, tel)
	if err != nil {
		var ce *client.Error
		if !errors.As(err, &ce) {
			ce = &client.Error{Code: client.CodeSpawn, Message: err.Error(), Err: err}
		}
		return ce
	}
	if ended.Status != 0 {
		return &cmdutil.ExitStatus{Code: ended.Status}
	}
	return nil
}

// common checks the flags both taps have and builds the recording's
// redaction and the fault rules from them.
func common(o *Options) (*capture.Redactor, *chaos.Engine, error) {
	if o.MaxLineBytes <= 0 {
		return nil, nil, cmdutil.Usagef("--max-line-bytes must be positive")
	}
	if o.NoRecord && o.Record != "" {
		return nil, nil, cmdutil.Usagef("--record and --no-record cannot be used together")
	}
	red, err := redactor(o)
	if err != nil {
		return nil, nil, err
	}
	faults, err := faultEngine(o)
	if err != nil {
		return nil, nil, err
	}
	return red, faults, nil
}

// redactor is the recording's redaction: the values of the environment's
// variables named like secrets and of --redact-env NAME, and the matches
// of --redact REGEX.
func redactor(o *Options) (*capture.Redactor, error) {
	secrets := secretEnv(os.Environ())
	for _, name := range o.RedactEnv {
		if name == "" || strings.Contains(name, "=") {
			return nil, cmdutil.Usagef(fmt.Sprintf("--redact-env %q: want a variable name", name))
		}
		if v, ok := os.LookupEnv(name); ok {
			secrets = append(secrets, name+"="+v)
		}
	}
	red, err := capture.NewRedactor(secrets, o.Redact)
	if err != nil {
		return nil, cmdutil.Usagef(err.Error())
	}
	return red, nil
}

// openRecording creates the recording's file: --record FILE, or a new
// file in the sessions folder. On failure it says why (the tap then
// forwards without recording).
func openRecording(o *Options, label string, t time.Time) (f *os.File, path, why string) {
	if o.Record != "" {
		f, err := capture.Create(o.Record, false)
		if err != nil {
			return nil, o.Record, err.Error()
		}
		return f, o.Record, ""
	}
	dir := o.SessionsDir
	if dir == "" {
		p, err := paths.Current()
		if err != nil {
			return nil, "", "no sessions folder: " + err.Error()
		}
		dir = p.Sessions
	}
	// The folder holds the recordings and the sessions' sockets: it is
	// the user's alone, or not used.
	if err := privateDir(dir); err != nil {
		return nil, "", "sessions folder " + dir + ": " + err.Error()
	}
	f, path, err := sessions.Create(dir, sessions.ID{Label: label, Start: t, PID: os.Getpid()})
	if err != nil {
		return nil, path, "sessions folder " + dir + ": " + err.Error()
	}
	return f, path, ""
}

// secretParts are the parts of a variable's name (between underscores)
// that say its value is a secret.
var secretParts = map[string]bool{
	"TOKEN": true, "SECRET": true, "PASSWORD": true, "PASSWD": true, "PASS": true, "KEY": true,
	"APIKEY": true, "CREDENTIAL": true, "CREDENTIALS": true, "AUTH": true, "COOKIE": true,
	"PAT": true, "PRIVATE": true,
}

// secretEnv returns the NAME=VALUE entries of env whose names say they
// hold a secret (secretParts): the tap passes the host's environment to
// the server as it is, and redacts those values in the recording.
func secretEnv(env []string) []string {
	var out []string
	for _, kv := range env {
		name, _, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		for _, part := range strings.Split(strings.ToUpper(name), "_") {
			if secretParts[part] {
				out = append(out, kv)
				break
			}
		}
	}
	return out
}

// startRecording opens the recording of a tapped session (unless
// --no-record): --record FILE or a new file in the sessions folder, a
// recorder with opts (sonde's version, and the buffer and the start when
// they are not set, added)
// following a new Observer, whose first note is note. When the
// file cannot be written it says why once on stderr (the host's log of the
// server's stderr shows it) and returns no observer: the tap forwards
// anyway.
func startRecording(env *cmdutil.Env, o *Options, label string, opts capture.Options, note string) (*client.Observer, *capture.Recorder, string) {
	return openRecorded(env, o, label, opts, note, false)
}

// openRecorded is startRecording; with grow, the recorder's subscription
// buffers a little and grows up to opts.Buffer only while the recorder
// is behind (client.Observer.SubscribeGrowing: an HTTP session's, one of
// hundreds).
func openRecorded(env *cmdutil.Env, o *Options, label string, opts capture.Options, note string, grow bool) (*client.Observer, *capture.Recorder, string) {
	if o.NoRecord {
		return nil, nil, ""
	}
	start := opts.Start
	if start.IsZero() {
		start = time.Now()
	}
	file, path, why := openRecording(o, label, start)
	if file != nil {
		opts.Sonde, opts.Start, opts.FlushAfter = cmdutil.Version, start, recordFlush
		if opts.Buffer <= 0 {
			opts.Buffer = recordBuffer
		}
		rec, err := capture.NewRecorder(file, opts)
		if err == nil {
			obs := client.NewObserver(0)
			if grow {
				rec.Follow(growing{obs})
			} else {
				rec.Follow(obs)
			}
			obs.Note(note, start)
			return obs, rec, path
		}
		file.Close()
		why = err.Error()
	}
	fmt.Fprintf(env.Err, "sonde tap: not recording: %s\n", why)
	return nil, nil, ""
}
