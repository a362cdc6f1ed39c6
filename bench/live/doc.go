// Package live runs levels against a real server (Live): the one driver
// on the wall clock, sending with the transport, every measured record
// into the summary, the client's health watched throughout; with hooks
// around a level (CacheReset, Profiler), the target resolved against
// the server's model list (Resolve), and a prefix cache's warming
// checked (CheckPrefixCache).
package live
