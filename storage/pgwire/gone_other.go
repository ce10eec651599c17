//go:build !unix

package pgwire

// gone cannot look without reading here: a dead pooled connection is found
// by the statement that uses it.
func (c *stallConn) gone() bool { return false }
