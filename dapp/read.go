package dapp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync/atomic"
	"time"
)

// ErrContentTimeout: job content named by URI was not read whole before
// the caller's deadline: for ipfs://, no connected node served it. The
// message says how much was read in how long.
var ErrContentTimeout = errors.New("dapp: job content not read in time")

// progressEvery is how often a read of job content in progress is logged.
const progressEvery = 5 * time.Second

// readContent reads the content uri names, at most limit bytes, into w
// through the fetcher. While it waits it logs, every progressEvery, what
// it waits for, the bytes read so far and the time spent; a read cut by
// ctx's deadline is ErrContentTimeout. what names the content ("code",
// "data") in messages.
func (c *Client) readContent(ctx context.Context, what, uri string, limit int64, w io.Writer) (int64, error) {
	if c.p.Fetch == nil {
		return 0, ErrNoFetch
	}
	start := time.Now()
	var n atomic.Int64
	done := make(chan struct{})
	defer close(done)
	go func() {
		t := time.NewTicker(progressEvery)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				c.log.Info("waiting for job content", "what", what, "uri", uri, "bytes", n.Load(),
					"elapsed", time.Since(start).Round(time.Second))
			}
		}
	}()
	timedOut := func(err error) error {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return fmt.Errorf("%w: %s %s: %d bytes read in %s; for ipfs://, no connected node served it (is a node "+
				"that holds it connected?): %w", ErrContentTimeout, what, uri, n.Load(), time.Since(start).Round(time.Second), err)
		}
		return err
	}
	rc, err := c.p.Fetch.Fetch(ctx, uri, limit)
	if err != nil {
		return 0, timedOut(err)
	}
	defer rc.Close()
	if _, err := io.Copy(w, &countingReader{r: rc, n: &n}); err != nil {
		return n.Load(), timedOut(err)
	}
	return n.Load(), nil
}

type countingReader struct {
	r io.Reader
	n *atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	k, err := c.r.Read(p)
	c.n.Add(int64(k))
	return k, err
}
