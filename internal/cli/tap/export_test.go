package tap

// FollowSession is followSession for the tests of the watch UI's source.
var FollowSession = followSession
