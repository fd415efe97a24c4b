// Package web is what every feature handler shares to speak HTTP: the
// route table's interface a handler mounts its routes on (Mux), and the
// few answer writers whose bytes and headers must be the same wherever
// they are written (JSON bodies, shared header values). It knows no
// feature: handlers import it, never the other way round.
package web
