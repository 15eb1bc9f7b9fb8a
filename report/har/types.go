package har

import (
	"net/http"
	"net/url"
	"sort"
)

// Document is a HAR file: its one log.
type Document struct {
	Log Log `json:"log"`
}

// Log is HAR 1.2's log object.
type Log struct {
	Version string  `json:"version"`
	Creator Creator `json:"creator"`
	Pages   []Page  `json:"pages"`
	Entries []Entry `json:"entries"`
}

// Creator names the program that wrote the log.
type Creator struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// Page is the session, the one page its entries belong to.
type Page struct {
	StartedDateTime string      `json:"startedDateTime"`
	ID              string      `json:"id"`
	Title           string      `json:"title"`
	PageTimings     PageTimings `json:"pageTimings"`
}

// PageTimings are not known of a session: -1.
type PageTimings struct {
	OnContentLoad float64 `json:"onContentLoad"`
	OnLoad        float64 `json:"onLoad"`
}

// Entry is one HTTP exchange.
type Entry struct {
	Pageref         string   `json:"pageref"`
	StartedDateTime string   `json:"startedDateTime"`
	Time            float64  `json:"time"`
	Request         Request  `json:"request"`
	Response        Response `json:"response"`
	Cache           Cache    `json:"cache"`
	Timings         Timings  `json:"timings"`
	Comment         string   `json:"comment,omitempty"`
}

// Request is an entry's request.
type Request struct {
	Method      string      `json:"method"`
	URL         string      `json:"url"`
	HTTPVersion string      `json:"httpVersion"`
	Cookies     []Cookie    `json:"cookies"`
	Headers     []NameValue `json:"headers"`
	QueryString []NameValue `json:"queryString"`
	PostData    *PostData   `json:"postData,omitempty"`
	HeadersSize int         `json:"headersSize"`
	BodySize    int         `json:"bodySize"`
}

// Response is an entry's response.
type Response struct {
	Status      int         `json:"status"`
	StatusText  string      `json:"statusText"`
	HTTPVersion string      `json:"httpVersion"`
	Cookies     []Cookie    `json:"cookies"`
	Headers     []NameValue `json:"headers"`
	Content     Content     `json:"content"`
	RedirectURL string      `json:"redirectURL"`
	HeadersSize int         `json:"headersSize"`
	BodySize    int         `json:"bodySize"`
}

// Cookie is never written (cookies are redacted), present for the type.
type Cookie struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// NameValue is a header or a query parameter.
type NameValue struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// PostData is a request's body.
type PostData struct {
	MimeType string  `json:"mimeType"`
	Params   []Param `json:"params"`
	Text     string  `json:"text"`
}

// Param is a posted form parameter (never: MCP posts JSON).
type Param struct {
	Name string `json:"name"`
}

// Content is a response's body.
type Content struct {
	Size     int    `json:"size"`
	MimeType string `json:"mimeType"`
	Text     string `json:"text"`
}

// Cache is empty: nothing is cached.
type Cache struct{}

// Timings are an exchange's phases in milliseconds (-1 when not known):
// wait is the server's share, until the response headers; receive the
// body after them (an SSE stream's whole life).
type Timings struct {
	Blocked float64 `json:"blocked"`
	DNS     float64 `json:"dns"`
	Connect float64 `json:"connect"`
	SSL     float64 `json:"ssl"`
	Send    float64 `json:"send"`
	Wait    float64 `json:"wait"`
	Receive float64 `json:"receive"`
}

// statusText is the reason phrase of code.
func statusText(code int) string { return http.StatusText(code) }

// sortedQuery is the query of u in key order.
func sortedQuery(q url.Values) []NameValue {
	keys := make([]string, 0, len(q))
	for k := range q {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := []NameValue{}
	for _, k := range keys {
		for _, v := range q[k] {
			out = append(out, NameValue{Name: k, Value: v})
		}
	}
	return out
}
