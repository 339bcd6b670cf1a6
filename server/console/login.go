package console

import (
	"html/template"
	"net/http"
	"net/url"
)

var loginPage = template.Must(template.New("login").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Sign in · ssgen console</title><link rel="stylesheet" href="/assets/console.css"></head>
<body class="login"><main><h1>ssgen console</h1>
{{if .Error}}<p class="error" role="alert">{{.Error}}</p>{{end}}
<form method="post" action="/login">
{{if .Password}}<label>User <input name="user" autocomplete="username" required autofocus></label>
<label>Password <input name="password" type="password" autocomplete="current-password" required></label>
{{else}}<label>Token <input name="token" type="password" autocomplete="off" required autofocus></label>
<p class="hint">The token is in the file given to <code>--http-token-file</code>, or in the URL <code>ssgen serve</code> printed.</p>{{end}}
<button type="submit">Sign in</button></form></main></body></html>
`))

// login signs a browser in. GET shows the form (or, with ?token=, signs in
// with the token of the URL printed at start and redirects to the
// console); POST checks the form. Either way a session cookie
// (HttpOnly, SameSite=Strict) is set and the browser sent to /.
func (c *Console) login(w http.ResponseWriter, r *http.Request) {
	if c.opts.Auth == AuthNone {
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	show := func(status int, msg string) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(status)
		_ = loginPage.Execute(w, struct {
			Password bool
			Error    string
		}{c.opts.Auth == AuthPassword, msg})
	}
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		tok := r.URL.Query().Get("token")
		if tok == "" || c.opts.Auth != AuthToken {
			show(http.StatusOK, "")
			return
		}
		if !c.gate.tokenOK(tok) {
			show(http.StatusUnauthorized, "That token is not this console's.")
			return
		}
	case http.MethodPost:
		// No session yet, so no CSRF token: the browser's own report of
		// where the form came from must say this origin.
		if why := sameOrigin(r); why != "" {
			httpError(w, http.StatusForbidden, why)
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, 4<<10)
		if err := r.ParseForm(); err != nil {
			show(http.StatusBadRequest, "The form could not be read.")
			return
		}
		switch c.opts.Auth {
		case AuthToken:
			if !c.gate.tokenOK(r.PostForm.Get("token")) {
				c.log.Warn("console: sign-in refused", "remote", r.RemoteAddr)
				show(http.StatusUnauthorized, "That token is not this console's.")
				return
			}
		case AuthPassword:
			user := r.PostForm.Get("user")
			ok, err := c.gate.checkPassword(r, user, r.PostForm.Get("password"))
			if err != nil {
				c.log.Warn("console: sign-in not checked", "user", user, "remote", r.RemoteAddr, "reason", err)
				w.Header().Set("Retry-After", retryAfter(err))
				status := http.StatusServiceUnavailable
				if err == errLoginTooMany {
					status = http.StatusTooManyRequests
				}
				show(status, "Not checked: "+err.Error()+".")
				return
			}
			if !ok {
				c.log.Warn("console: sign-in refused", "user", user, "remote", r.RemoteAddr)
				show(http.StatusUnauthorized, "Wrong user name or password.")
				return
			}
			c.gate.setCookie(w, c.gate.newSession(user), int(sessionTTL.Seconds()))
			http.Redirect(w, r, "/", http.StatusSeeOther)
			return
		}
	default:
		w.Header().Set("Allow", "GET, HEAD, POST")
		httpError(w, http.StatusMethodNotAllowed, "sign in with GET or POST")
		return
	}
	c.gate.setCookie(w, c.gate.newSession(""), int(sessionTTL.Seconds()))
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

// logout ends the browser's session (POST, same origin only).
func (c *Console) logout(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		httpError(w, http.StatusMethodNotAllowed, "sign out with POST")
		return
	}
	if why := sameOrigin(r); why != "" {
		httpError(w, http.StatusForbidden, why)
		return
	}
	c.gate.endSession(r)
	c.gate.setCookie(w, "", -1)
	http.Redirect(w, r, "/login", http.StatusSeeOther)
}

// sameOrigin refuses a request a browser reports as coming from another
// site: Sec-Fetch-Site other than same-origin or none, or an Origin whose
// host is not this one. Programs that send neither pass.
func sameOrigin(r *http.Request) string {
	if s := r.Header.Get("Sec-Fetch-Site"); s != "" && s != "same-origin" && s != "none" {
		return "cross-site request refused (Sec-Fetch-Site: " + s + ")"
	}
	if o := r.Header.Get("Origin"); o != "" {
		u, err := url.Parse(o)
		if err != nil || u.Host != r.Host {
			return "cross-origin request refused (Origin " + o + ")"
		}
	}
	return ""
}
