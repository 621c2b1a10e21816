package apiv1

import "time"

// Login is the answer to POST /v1/login: a one-time code that opens a
// dashboard session, and the dashboard URL that carries it in its
// fragment (never sent to the server with the page, so it stays out of
// logs and Referer headers).
type Login struct {
	URL     string    `json:"url"`
	Code    string    `json:"code"`
	Expires time.Time `json:"expires"`
}

// SessionRequest is the body of POST /v1/session: the one-time code.
type SessionRequest struct {
	Code string `json:"code"`
}

// Session is the answer to POST /v1/session. The session itself is an
// HttpOnly cookie; CSRF is given only here, once: the page sends it in the
// X-Jobmesh-CSRF header of every request that changes state.
type Session struct {
	CSRF    string    `json:"csrf"`
	Expires time.Time `json:"expires"`
}

// CSRFHeader is the header a dashboard session's state-changing requests
// carry.
const CSRFHeader = "X-Jobmesh-CSRF"
