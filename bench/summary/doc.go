// Package summary is the summariser: a level's measured records in, its
// result out. It keeps HDR histograms of every latency, counts requests,
// errors and tokens, judges whether the server kept pace with the offered
// load (throughput against the offer, and the queue's growth through the
// window), states the cache hit the prompts explain beside the one the
// server reports, takes the client's health verdict, and writes the small
// print a reader must see. It is pure: no client, no clock, no network; a
// live run and its prediction are summarised by the very same code.
package summary
