package api

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/jobmesh/jobmesh/apiv1"
	"github.com/jobmesh/jobmesh/internal/strictjson"
)

// ErrBadLoginCode: the code is unknown, used or expired.
var ErrBadLoginCode = errors.New("api: unknown, used or expired login code")

// maxSessionBody bounds the body of POST /v1/session.
const maxSessionBody = 4 << 10

// sessionCookie prefixes the session cookie's name; the port follows, as
// browsers send a host's cookies to each of its ports.
const sessionCookie = "jobmesh_session"

// sessions holds the dashboard's one-time login codes and sessions. Both
// are kept by the SHA-256 of their secret, so that a lookup's timing says
// nothing about the secret.
type sessions struct {
	cfg Config

	mu    sync.Mutex
	codes map[[32]byte]issued   // code hash → when it was issued
	live  map[[32]byte]*session // session ID hash → session
	seq   uint64                // issue order of codes and sessions
}

// issued is a login code's expiry and issue order.
type issued struct {
	expires time.Time
	seq     uint64
}

// session is one signed-in dashboard.
type session struct {
	key     string // a short public name, for per-client limits
	csrf    string
	expires time.Time
	seq     uint64
}

func (s *session) csrfMatches(v string) bool {
	return v != "" && subtle.ConstantTimeCompare([]byte(v), []byte(s.csrf)) == 1
}

func newSessions(cfg Config) *sessions {
	return &sessions{cfg: cfg, codes: map[[32]byte]issued{}, live: map[[32]byte]*session{}}
}

func secret() string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// newCode returns a fresh one-time login code and its expiry.
func (s *sessions) newCode() (string, time.Time) {
	code := secret()
	now := s.cfg.now()
	exp := now.Add(s.cfg.LoginTTL)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.prune(now)
	if len(s.codes) >= s.cfg.MaxSessions {
		evictOldest(s.codes, func(c issued) uint64 { return c.seq })
	}
	s.seq++
	s.codes[sha256.Sum256([]byte(code))] = issued{expires: exp, seq: s.seq}
	return code, exp
}

// redeem spends a login code for a new session: its ID (the cookie's
// value) and the session.
func (s *sessions) redeem(code string) (string, *session, error) {
	now := s.cfg.now()
	h := sha256.Sum256([]byte(code))
	s.mu.Lock()
	defer s.mu.Unlock()
	s.prune(now)
	if _, ok := s.codes[h]; !ok {
		return "", nil, ErrBadLoginCode
	}
	delete(s.codes, h)
	if len(s.live) >= s.cfg.MaxSessions {
		evictOldest(s.live, func(ss *session) uint64 { return ss.seq })
	}
	id := secret()
	ih := sha256.Sum256([]byte(id))
	s.seq++
	ss := &session{key: hex.EncodeToString(ih[:8]), csrf: secret(), expires: now.Add(s.cfg.SessionTTL), seq: s.seq}
	s.live[ih] = ss
	return id, ss, nil
}

// fromRequest returns the live session the request's cookie names, or nil.
func (s *sessions) fromRequest(r *http.Request) *session {
	c, err := r.Cookie(cookieName(r))
	if err != nil || c.Value == "" {
		return nil
	}
	now := s.cfg.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	ss := s.live[sha256.Sum256([]byte(c.Value))]
	if ss == nil || !now.Before(ss.expires) {
		return nil
	}
	return ss
}

func (s *sessions) end(ss *session) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for h, v := range s.live {
		if v == ss {
			delete(s.live, h)
		}
	}
}

// prune drops expired codes and sessions; s.mu is held.
func (s *sessions) prune(now time.Time) {
	for h, c := range s.codes {
		if !now.Before(c.expires) {
			delete(s.codes, h)
		}
	}
	for h, ss := range s.live {
		if !now.Before(ss.expires) {
			delete(s.live, h)
		}
	}
}

// evictOldest drops the entry issued first. Every entry lives as long as
// the others of its kind, so the first issued is also the first to
// expire; the issue order, unlike the clock, has no ties.
func evictOldest[V any](m map[[32]byte]V, seq func(V) uint64) {
	var (
		first [32]byte
		least uint64
	)
	for h, v := range m {
		if n := seq(v); least == 0 || n < least {
			first, least = h, n
		}
	}
	delete(m, first)
}

func cookieName(r *http.Request) string {
	if _, port, err := net.SplitHostPort(r.Host); err == nil && port != "" {
		return sessionCookie + "_" + port
	}
	return sessionCookie
}

// LoginURL returns a dashboard URL under base ("http://127.0.0.1:5001")
// that opens a session once, before it expires.
func (h *Handler) LoginURL(base string) (string, time.Time) {
	code, exp := h.sessions.newCode()
	return loginURL(base, code), exp
}

func loginURL(base, code string) string {
	return base + "/ui/#login=" + code
}

// login answers POST /v1/login (bearer token only) with a new one-time
// code and the dashboard URL that carries it.
func (h *Handler) login(w http.ResponseWriter, r *http.Request) {
	code, exp := h.sessions.newCode()
	writeJSON(w, http.StatusCreated, apiv1.Login{URL: loginURL(ownOrigin(r), code), Code: code, Expires: exp.UTC()})
}

// startSession answers POST /v1/session: it spends the one-time code in
// the body for an HttpOnly, SameSite=Strict session cookie, and gives the
// session's CSRF token in the answer, the only time it is given.
func (h *Handler) startSession(w http.ResponseWriter, r *http.Request) {
	if err := contentType(r, "application/json"); err != nil {
		writeError(w, http.StatusUnsupportedMediaType, err)
		return
	}
	b, err := io.ReadAll(io.LimitReader(r.Body, maxSessionBody+1))
	if err != nil {
		writeError(w, http.StatusBadRequest, fmt.Errorf("reading the body: %w", err))
		return
	}
	var req apiv1.SessionRequest
	if err := strictjson.Decode(b, maxSessionBody, &req); err != nil {
		writeError(w, http.StatusBadRequest, fmt.Errorf("request body: %w", err))
		return
	}
	id, ss, err := h.sessions.redeem(req.Code)
	if err != nil {
		h.refuse(w, r, http.StatusUnauthorized, refusedLogin, err)
		return
	}
	http.SetCookie(w, &http.Cookie{
		Name: cookieName(r), Value: id, Path: "/", Expires: ss.expires, MaxAge: int(h.cfg.SessionTTL.Seconds()),
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil,
	})
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusCreated, apiv1.Session{CSRF: ss.csrf, Expires: ss.expires.UTC()})
}

// endSession answers DELETE /v1/session: the request's session ends and
// its cookie is cleared.
func (h *Handler) endSession(w http.ResponseWriter, r *http.Request) {
	if p := principalOf(r); p.session != nil {
		h.sessions.end(p.session)
	}
	http.SetCookie(w, &http.Cookie{Name: cookieName(r), Value: "", Path: "/", MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteStrictMode})
	w.WriteHeader(http.StatusNoContent)
}
