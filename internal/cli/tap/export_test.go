package tap

// FollowSession is followSession for the tests of the watch UI's source.
var FollowSession = followSession

// ListSessionsCached is the watch list's read of the sessions folder,
// through a cache kept between calls (nil: none).
func ListSessionsCached(dir string, cache sessionCache) ([]Session, error) {
	return listSessions(dir, cache)
}
