package list

import "strings"

// BreakQuery is the breakpoint (a query in the filter language,
// docs/filter.md) that a `b` on a row sets: frames that go the way dir
// goes, of kind, for tool (when set) or else method. A value the query
// cannot carry (a double quote in it) is left out.
func BreakQuery(dir, kind, method, tool string) string {
	terms := []string{"dir:" + dir}
	if kind != "" {
		terms = append(terms, "kind:"+kind)
	}
	switch {
	case tool != "" && queryable(tool):
		terms = append(terms, "tool:"+quoteTerm(tool))
	case method != "" && queryable(method):
		terms = append(terms, "method:"+quoteTerm(method))
	}
	return strings.Join(terms, " ")
}

func queryable(v string) bool { return !strings.ContainsAny(v, "\"\\\n\r") }

func quoteTerm(v string) string {
	if strings.ContainsAny(v, " \t:-") {
		return `"` + v + `"`
	}
	return v
}
