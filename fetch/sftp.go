package fetch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/url"
	"os"
	"time"

	"github.com/pkg/sftp"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// sftpFetcher serves sftp://user@host[:port]/path over SSH. The user comes
// from the URI, the credentials and the host key check from SFTPConfig.
type sftpFetcher struct {
	auth        []ssh.AuthMethod
	hostKey     ssh.HostKeyCallback
	dialTimeout time.Duration
	dialer      *net.Dialer
}

var _ Fetcher = (*sftpFetcher)(nil)

func newSFTPFetcher(cfg Config) (*sftpFetcher, error) {
	f := &sftpFetcher{dialTimeout: cfg.DialTimeout, dialer: newDialer(cfg)}
	if len(cfg.SFTP.PrivateKey) > 0 {
		signer, err := ssh.ParsePrivateKey(cfg.SFTP.PrivateKey)
		if err != nil {
			return nil, fmt.Errorf("fetch: SFTP private key: %w", err)
		}
		f.auth = append(f.auth, ssh.PublicKeys(signer))
	}
	if cfg.SFTP.Password != "" {
		f.auth = append(f.auth, ssh.Password(cfg.SFTP.Password))
	}
	switch {
	case cfg.SFTP.HostKeyFingerprint != "":
		want := cfg.SFTP.HostKeyFingerprint
		f.hostKey = func(host string, _ net.Addr, key ssh.PublicKey) error {
			if got := ssh.FingerprintSHA256(key); got != want {
				return fmt.Errorf("host key of %s is %s, want %s", host, got, want)
			}
			return nil
		}
	default:
		cb, err := knownhosts.New(cfg.SFTP.KnownHostsFile)
		if err != nil {
			return nil, fmt.Errorf("fetch: SFTP known_hosts: %w", err)
		}
		f.hostKey = cb
	}
	return f, nil
}

func (f *sftpFetcher) Fetch(ctx context.Context, uri string, limit int64) (io.ReadCloser, error) {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "sftp" || u.User == nil || u.User.Username() == "" || u.Hostname() == "" || u.Path == "" {
		return nil, fmt.Errorf("%w: want sftp://user@host[:port]/path: %q", ErrInvalidURI, uri)
	}
	if _, has := u.User.Password(); has {
		return nil, fmt.Errorf("%w: passwords belong in the configuration, not the URI", ErrInvalidURI)
	}
	addr := u.Host
	if u.Port() == "" {
		addr = net.JoinHostPort(u.Hostname(), "22")
	}

	dctx, cancel := context.WithTimeout(ctx, f.dialTimeout)
	defer cancel()
	conn, err := f.dialer.DialContext(dctx, "tcp", addr)
	if err != nil {
		return nil, cannotConnect(err)
	}
	// The SSH handshake has no context of its own; a deadline on the socket
	// bounds it.
	deadline, _ := dctx.Deadline()
	conn.SetDeadline(deadline)
	cc, chans, reqs, err := ssh.NewClientConn(conn, addr, &ssh.ClientConfig{
		User:            u.User.Username(),
		Auth:            f.auth,
		HostKeyCallback: f.hostKey,
	})
	if err != nil {
		conn.Close()
		return nil, cannotConnect(fmt.Errorf("ssh handshake: %w", err))
	}
	conn.SetDeadline(time.Time{})
	client := ssh.NewClient(cc, chans, reqs)
	// Ending the fetch (deadline, cancel) closes the connection, which
	// unblocks any pending read.
	stop := context.AfterFunc(ctx, func() { client.Close() })
	fail := func(err error) (io.ReadCloser, error) {
		stop()
		client.Close()
		return nil, err
	}
	sc, err := sftp.NewClient(client)
	if err != nil {
		return fail(fmt.Errorf("%w: sftp subsystem: %w", ErrUnreachable, err))
	}
	file, err := sc.Open(u.Path)
	if err != nil {
		sc.Close()
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, os.ErrNotExist) {
			return fail(fmt.Errorf("%w: %s", ErrNotFound, u.Path))
		}
		return fail(fmt.Errorf("%w: open %s: %w", ErrUnreachable, u.Path, err))
	}
	st, err := file.Stat()
	if err != nil {
		file.Close()
		sc.Close()
		return fail(fmt.Errorf("%w: stat %s: %w", ErrUnreachable, u.Path, err))
	}
	if !st.Mode().IsRegular() {
		file.Close()
		sc.Close()
		return fail(fmt.Errorf("%w: %s is not a regular file", ErrNotFound, u.Path))
	}
	if st.Size() > limit {
		file.Close()
		sc.Close()
		return fail(fmt.Errorf("%w: %d bytes > %d", ErrTooLarge, st.Size(), limit))
	}
	return &sftpReader{file: file, sc: sc, client: client, stop: stop}, nil
}

// sftpReader owns the whole connection: closing it closes file, SFTP
// session and SSH connection.
type sftpReader struct {
	file   *sftp.File
	sc     *sftp.Client
	client *ssh.Client
	stop   func() bool
}

func (r *sftpReader) Read(p []byte) (int, error) { return r.file.Read(p) }

func (r *sftpReader) Close() error {
	r.stop()
	return errors.Join(r.file.Close(), r.sc.Close(), ignoreClosed(r.client.Close()))
}

func ignoreClosed(err error) error {
	if errors.Is(err, net.ErrClosed) || errors.Is(err, io.EOF) {
		return nil
	}
	return err
}
