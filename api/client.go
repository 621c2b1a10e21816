package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/jobmesh/jobmesh/node"
)

// ErrAPI is wrapped by errors the API itself returns.
var ErrAPI = errors.New("api error")

// Client talks to a running node's API.
type Client struct {
	base string
	http *http.Client
}

// NewClient returns a client for the API at addr (HOST:PORT).
func NewClient(addr string) *Client {
	return &Client{base: "http://" + addr, http: &http.Client{Timeout: 30 * time.Second}}
}

// ClientForRepo finds the daemon running on the repo in dir.
func ClientForRepo(dir string) (*Client, error) {
	addr, err := node.ReadAPIAddr(dir)
	if err != nil {
		return nil, err
	}
	return NewClient(addr), nil
}

func (c *Client) get(ctx context.Context, path string, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+path, nil)
	if err != nil {
		return err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("%w (is the daemon running?): %w", node.ErrNotRunning, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return fmt.Errorf("api: read %s: %w", path, err)
	}
	if resp.StatusCode != http.StatusOK {
		var e Error
		if json.Unmarshal(body, &e) == nil && e.Error != "" {
			return fmt.Errorf("%w: %s: %s", ErrAPI, path, e.Error)
		}
		return fmt.Errorf("%w: %s: HTTP %d", ErrAPI, path, resp.StatusCode)
	}
	if err := json.Unmarshal(body, out); err != nil {
		return fmt.Errorf("api: decode %s: %w", path, err)
	}
	return nil
}

// ID returns the node's identity and addresses.
func (c *Client) ID(ctx context.Context) (ID, error) {
	var id ID
	return id, c.get(ctx, "/v1/id", &id)
}

// Peers lists the node's connected peers.
func (c *Client) Peers(ctx context.Context) ([]Peer, error) {
	var ps []Peer
	return ps, c.get(ctx, "/v1/peers", &ps)
}

// Nodes lists the processors the node knows from the replicated store.
func (c *Client) Nodes(ctx context.Context) ([]node.Advert, error) {
	var ads []node.Advert
	return ads, c.get(ctx, "/v1/nodes", &ads)
}
