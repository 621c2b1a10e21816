package meshclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/jobmesh/jobmesh/apiv1"
)

var (
	// ErrNotRunning: no node answers at the client's address.
	ErrNotRunning = errors.New("meshclient: no daemon running")
	// ErrNoRepo: the directory holds no jobmesh repo.
	ErrNoRepo = errors.New("meshclient: no repo (run 'jobnode init')")
)

// Repo files ForRepo reads; they match the node's.
const (
	repoConfigFile = "config.toml"
	repoAPIFile    = "api"
	repoTokenFile  = "api.token"
)

// maxResponse bounds a JSON answer read into memory.
const maxResponse = 64 << 20

// Error is an error the API answered: its HTTP status and the message of
// its JSON error body.
type Error struct {
	Status  int
	Message string
}

func (e *Error) Error() string {
	return fmt.Sprintf("HTTP %d: %s", e.Status, e.Message)
}

// Client talks to one node's API. It is safe for concurrent use.
type Client struct {
	base  string
	token string
	http  *http.Client
	// Poll is how often Wait reads the job. Default 1s.
	Poll time.Duration
}

// Option configures a Client.
type Option func(*Client)

// WithToken sends token as the bearer token of every request. The node
// requires it for every request that changes state (Upload, Submit,
// Cancel, Login) and for reads from beyond loopback.
func WithToken(token string) Option {
	return func(c *Client) { c.token = token }
}

// WithHTTPClient sends requests with hc instead of a default client.
func WithHTTPClient(hc *http.Client) Option {
	return func(c *Client) { c.http = hc }
}

// New returns a client of the API at baseURL ("http://127.0.0.1:5001");
// a bare HOST:PORT means http://HOST:PORT.
func New(baseURL string, opts ...Option) *Client {
	if !strings.Contains(baseURL, "://") {
		baseURL = "http://" + baseURL
	}
	c := &Client{base: strings.TrimSuffix(baseURL, "/"), http: &http.Client{}, Poll: time.Second}
	for _, o := range opts {
		o(c)
	}
	return c
}

// ForRepo returns a client of the daemon running on the repo in dir: the
// address is in the repo's api file while the daemon runs, and the token
// in its api.token file (a repo without one gets a client without a
// token, which can only read). opts come after those.
func ForRepo(dir string, opts ...Option) (*Client, error) {
	addr, err := APIAddr(dir)
	if err != nil {
		return nil, err
	}
	tok, err := RepoToken(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	return New(addr, append([]Option{WithToken(tok)}, opts...)...), nil
}

// RepoToken reads the API token of the repo in dir (its api.token file).
func RepoToken(dir string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dir, repoTokenFile))
	if err != nil {
		return "", fmt.Errorf("meshclient: read api token: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}

// APIAddr reads the address of the daemon running on the repo in dir.
func APIAddr(dir string) (string, error) {
	if _, err := os.Stat(filepath.Join(dir, repoConfigFile)); errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("%w: %s", ErrNoRepo, dir)
	}
	b, err := os.ReadFile(filepath.Join(dir, repoAPIFile))
	if errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("%w on this repo: %s", ErrNotRunning, dir)
	}
	if err != nil {
		return "", fmt.Errorf("meshclient: read api file: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}

// BaseURL is the API's base URL.
func (c *Client) BaseURL() string { return c.base }

// Token is the bearer token the client sends; "" for none.
func (c *Client) Token() string { return c.token }

// do sends a request and returns the response of a 2xx answer; any other
// answer becomes an *Error.
func (c *Client) do(ctx context.Context, method, path, contentType string, body io.Reader) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	if err != nil {
		return nil, fmt.Errorf("meshclient: %w", err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("%w (is the daemon running?): %w", ErrNotRunning, err)
	}
	if resp.StatusCode/100 == 2 {
		return resp, nil
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	var e apiv1.Error
	if json.Unmarshal(b, &e) != nil || e.Error == "" {
		e.Error = strings.TrimSpace(string(b))
		if e.Error == "" {
			e.Error = http.StatusText(resp.StatusCode)
		}
	}
	return nil, &Error{Status: resp.StatusCode, Message: e.Error}
}

func (c *Client) call(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	ct := ""
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("meshclient: encode %s: %w", path, err)
		}
		body, ct = bytes.NewReader(b), "application/json"
	}
	resp, err := c.do(ctx, method, path, ct, body)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	return decode(resp, path, out)
}

func decode(resp *http.Response, path string, out any) error {
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse+1))
	if err != nil {
		return fmt.Errorf("meshclient: read %s: %w", path, err)
	}
	if len(b) > maxResponse {
		return fmt.Errorf("meshclient: answer to %s exceeds %d bytes", path, maxResponse)
	}
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("meshclient: decode %s: %w", path, err)
	}
	return nil
}

// ID returns the node's identity and addresses.
func (c *Client) ID(ctx context.Context) (apiv1.ID, error) {
	var id apiv1.ID
	return id, c.call(ctx, http.MethodGet, "/v1/id", nil, &id)
}

// Peers lists the node's connected peers.
func (c *Client) Peers(ctx context.Context) ([]apiv1.Peer, error) {
	var ps []apiv1.Peer
	return ps, c.call(ctx, http.MethodGet, "/v1/peers", nil, &ps)
}

// Nodes lists the processors the node knows from the replicated store.
func (c *Client) Nodes(ctx context.Context) ([]apiv1.Node, error) {
	var ns []apiv1.Node
	return ns, c.call(ctx, http.MethodGet, "/v1/nodes", nil, &ns)
}

// Upload adds content to the node's block layer (POST /v1/content); the
// answer's URI can be a job's code or data.
func (c *Client) Upload(ctx context.Context, r io.Reader) (apiv1.Content, error) {
	var out apiv1.Content
	resp, err := c.do(ctx, http.MethodPost, "/v1/content", "application/octet-stream", r)
	if err != nil {
		return out, err
	}
	defer resp.Body.Close()
	return out, decode(resp, "/v1/content", &out)
}

// Submit publishes a job (POST /v1/jobs): the node funds its escrow when
// it has a chain.
func (c *Client) Submit(ctx context.Context, req apiv1.SubmitRequest) (apiv1.Job, error) {
	var j apiv1.Job
	return j, c.call(ctx, http.MethodPost, "/v1/jobs", req, &j)
}

// Plan checks a submission as Submit does and returns the plan it would
// make, publishing nothing.
func (c *Client) Plan(ctx context.Context, req apiv1.SubmitRequest) (apiv1.Plan, error) {
	var p apiv1.Plan
	return p, c.call(ctx, http.MethodPost, "/v1/jobs/plan", req, &p)
}

// Job returns one job's summary.
func (c *Client) Job(ctx context.Context, id string) (apiv1.Job, error) {
	var j apiv1.Job
	return j, c.call(ctx, http.MethodGet, "/v1/jobs/"+url.PathEscape(id), nil, &j)
}

// Describe returns everything the node knows of one job: its plan,
// MicroJobs, who ran what, events, errors and settlement.
func (c *Client) Describe(ctx context.Context, id string) (apiv1.JobDescription, error) {
	var d apiv1.JobDescription
	return d, c.call(ctx, http.MethodGet, "/v1/jobs/"+url.PathEscape(id)+"/describe", nil, &d)
}

// Jobs lists every job the node knows, newest first.
func (c *Client) Jobs(ctx context.Context) ([]apiv1.Job, error) {
	var js []apiv1.Job
	return js, c.call(ctx, http.MethodGet, "/v1/jobs", nil, &js)
}

// Cancel withdraws a job the node submitted, before work on it started
// (POST /v1/jobs/{id}/cancel), and returns its summary.
func (c *Client) Cancel(ctx context.Context, id string) (apiv1.Job, error) {
	var j apiv1.Job
	return j, c.call(ctx, http.MethodPost, "/v1/jobs/"+url.PathEscape(id)+"/cancel", nil, &j)
}

// Login asks the node for a one-time dashboard login (POST /v1/login,
// token only): opening its URL in a browser starts a dashboard session
// that can also change state (cancel jobs).
func (c *Client) Login(ctx context.Context) (apiv1.Login, error) {
	var l apiv1.Login
	return l, c.call(ctx, http.MethodPost, "/v1/login", nil, &l)
}

// Output opens the job's assembled output (GET /v1/jobs/{id}/output): a
// PNG for a png-grid job, the concatenated block outputs otherwise. The
// caller closes it.
func (c *Client) Output(ctx context.Context, id string) (io.ReadCloser, error) {
	resp, err := c.do(ctx, http.MethodGet, "/v1/jobs/"+url.PathEscape(id)+"/output", "", nil)
	if err != nil {
		return nil, err
	}
	return resp.Body, nil
}

// Done reports whether Wait returns at j: a terminal state, or a verdict
// when the node has no chain (escrow is its ID's Escrow) and so nothing
// follows it.
func Done(j apiv1.Job, escrow string) bool {
	return j.State.Terminal() || (escrow == "" && j.State == apiv1.JobVerified)
}

// Wait follows a job until it is done (see Done), calling onChange, when
// not nil, with the first summary and each one that differs. It reads the
// job every Poll.
func (c *Client) Wait(ctx context.Context, id string, onChange func(apiv1.Job)) (apiv1.Job, error) {
	nid, err := c.ID(ctx)
	if err != nil {
		return apiv1.Job{}, err
	}
	poll := c.Poll
	if poll <= 0 {
		poll = time.Second
	}
	t := time.NewTicker(poll)
	defer t.Stop()
	var last []byte
	for {
		j, err := c.Job(ctx, id)
		if err != nil {
			return j, err
		}
		// Updated alone moves on every record: a change is any other field.
		cmp := j
		cmp.Updated = time.Time{}
		b, _ := json.Marshal(cmp)
		if onChange != nil && !bytes.Equal(b, last) {
			onChange(j)
		}
		last = b
		if Done(j, nid.Escrow) {
			return j, nil
		}
		select {
		case <-ctx.Done():
			return j, ctx.Err()
		case <-t.C:
		}
	}
}

// DispatchNodes lists the live processors with their grade, stake, QoS
// and selection weight (GET /v1/dispatch/nodes).
func (c *Client) DispatchNodes(ctx context.Context) (apiv1.DispatchNodes, error) {
	var out apiv1.DispatchNodes
	return out, c.call(ctx, http.MethodGet, "/v1/dispatch/nodes", nil, &out)
}

// Queue lists the open jobs in their dispatch groups with their values
// (GET /v1/queue).
func (c *Client) Queue(ctx context.Context) (apiv1.Queue, error) {
	var out apiv1.Queue
	return out, c.call(ctx, http.MethodGet, "/v1/queue", nil, &out)
}
