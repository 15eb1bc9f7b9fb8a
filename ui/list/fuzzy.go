package list

import "github.com/sahilm/fuzzy"

// Fuzzy filters a list by a query the way the pickers and lists do: the
// indexes of src's items that match query (sahilm/fuzzy, best match
// first), each with the byte offsets of its matched characters; for an
// empty query every item in order, with nil offsets. It appends to
// visible[:0] and matched[:0], reusing their storage.
func Fuzzy(query string, src fuzzy.Source, visible []int, matched [][]int) ([]int, [][]int) {
	visible, matched = visible[:0], matched[:0]
	if query == "" {
		for i := range src.Len() {
			visible = append(visible, i)
			matched = append(matched, nil)
		}
		return visible, matched
	}
	for _, mt := range fuzzy.FindFrom(query, src) {
		visible = append(visible, mt.Index)
		matched = append(matched, mt.MatchedIndexes)
	}
	return visible, matched
}
