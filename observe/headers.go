package observe

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// ErrHeader is the cause of an export header that cannot be sent: a name
// that is not an HTTP token, or a value with a control character (CR, LF,
// NUL: a header of its own smuggled into every export).
var ErrHeader = errors.New("not an HTTP header")

// ParseHeader reads one --otlp-header NAME=VALUE: the name trimmed of
// spaces, the value as given. The error wraps ErrHeader.
func ParseHeader(kv string) (name, value string, err error) {
	k, v, ok := strings.Cut(kv, "=")
	name = strings.TrimSpace(k)
	switch {
	case !ok || name == "":
		return "", "", fmt.Errorf("%w: want K=V", ErrHeader)
	case !validName(name):
		return "", "", fmt.Errorf("%w: the name %q is not an HTTP token (letters, digits and !#$%%&'*+-.^_`|~)", ErrHeader, name)
	case !validValue(v):
		return "", "", fmt.Errorf("%w: the value of %s holds a control character (CR, LF, NUL…)", ErrHeader, name)
	}
	return name, v, nil
}

// ParseEnvHeaders reads OTEL_EXPORTER_OTLP_HEADERS: NAME=VALUE pairs
// separated by commas, each value URL-decoded (percent escapes, as the
// SDK reads them). A pair that is not a header, or whose value does not
// decode, is left out, and said in skipped (never with its value).
func ParseEnvHeaders(s string) (h map[string]string, skipped []string) {
	h = map[string]string{}
	for _, kv := range strings.Split(s, ",") {
		if strings.TrimSpace(kv) == "" {
			continue
		}
		k, v, ok := strings.Cut(kv, "=")
		if ok {
			u, err := url.PathUnescape(strings.TrimSpace(v))
			if err != nil {
				skipped = append(skipped, fmt.Sprintf("%v: the value of %s is not URL-encoded", ErrHeader, strings.TrimSpace(k)))
				continue
			}
			kv = k + "=" + u
		}
		name, value, err := ParseHeader(kv)
		if err != nil {
			skipped = append(skipped, err.Error())
			continue
		}
		h[name] = value
	}
	return h, skipped
}

// validName reports whether s is an HTTP token (RFC 9110, 5.6.2).
func validName(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return s != ""
}

// validValue reports whether s holds no control character but tab.
func validValue(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < 0x20 && c != '\t') || c == 0x7f {
			return false
		}
	}
	return true
}
