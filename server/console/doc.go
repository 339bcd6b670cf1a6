// Package console is the web console of a state store server, with the
// Prometheus metrics, the health probes and (Options.Pprof) Go's profiler
// on the same HTTP listener: a key browser (a tree by '/' levels, or a
// glob search, paged with bounded work), the embedded broker's clients, a
// live trace of requests, and a form that sets or deletes a key, through a
// schema when Options.Schema is set.
//
// A Console is built on the server's observation hooks: Install hooks it
// into a server's Options before server.New, and Start serves it once the
// server runs.
//
//	con, err := console.Install(&opts, console.Options{Addr: "127.0.0.1:0"})
//	srv, err := server.New(opts)
//	err = srv.Start()
//	err = con.Start(srv)
//	defer con.Close()
//	fmt.Println(con.URL())
//
// The console guards itself: it listens on a loopback address unless
// Options.Auth requires a token or a password, answers only to the host
// names it knows, refuses cross-site writes, and shows and changes only
// the keys Options.Policy lets Options.Principal read and write. Handle
// mounts more handlers behind the same checks, and Access tells them
// which keys their caller may read and write.
//
// docs/console.md describes what the console shows, its endpoints,
// metric names, security model and cost to the request path.
package console
