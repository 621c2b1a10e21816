package fetch

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/pem"
	"errors"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/pkg/sftp"
	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"
)

// sftpServer is a real SSH server with the SFTP subsystem on 127.0.0.1,
// serving the local file system read-only.
type sftpServer struct {
	addr    string
	hostKey ssh.PublicKey
}

// startSFTPServer accepts password "secret" for user "jobmesh", and the
// public key clientKey when it is not nil. It stops at test cleanup.
func startSFTPServer(t *testing.T, clientKey ssh.PublicKey) sftpServer {
	t.Helper()
	_, hostPriv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	hostSigner, err := ssh.NewSignerFromKey(hostPriv)
	if err != nil {
		t.Fatal(err)
	}
	cfg := &ssh.ServerConfig{
		PasswordCallback: func(c ssh.ConnMetadata, pw []byte) (*ssh.Permissions, error) {
			if c.User() == "jobmesh" && string(pw) == "secret" {
				return nil, nil
			}
			return nil, errors.New("denied")
		},
		PublicKeyCallback: func(c ssh.ConnMetadata, key ssh.PublicKey) (*ssh.Permissions, error) {
			if clientKey != nil && c.User() == "jobmesh" && bytes.Equal(key.Marshal(), clientKey.Marshal()) {
				return nil, nil
			}
			return nil, errors.New("denied")
		},
	}
	cfg.AddHostKey(hostSigner)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		conns []net.Conn
	)
	wg.Go(func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, conn)
			mu.Unlock()
			wg.Go(func() { serveSSH(conn, cfg, &wg) })
		}
	})
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return sftpServer{addr: ln.Addr().String(), hostKey: hostSigner.PublicKey()}
}

func serveSSH(conn net.Conn, cfg *ssh.ServerConfig, wg *sync.WaitGroup) {
	sc, chans, reqs, err := ssh.NewServerConn(conn, cfg)
	if err != nil {
		conn.Close()
		return
	}
	defer sc.Close()
	wg.Go(func() { ssh.DiscardRequests(reqs) })
	for nc := range chans {
		if nc.ChannelType() != "session" {
			nc.Reject(ssh.UnknownChannelType, "session only")
			continue
		}
		ch, chReqs, err := nc.Accept()
		if err != nil {
			continue
		}
		wg.Go(func() {
			for req := range chReqs {
				// The subsystem request payload is an SSH string: uint32 length, name.
				ok := req.Type == "subsystem" && len(req.Payload) > 4 && string(req.Payload[4:]) == "sftp"
				req.Reply(ok, nil)
				if !ok {
					continue
				}
				wg.Go(func() {
					srv, err := sftp.NewServer(ch, sftp.ReadOnly())
					if err != nil {
						ch.Close()
						return
					}
					srv.Serve()
					srv.Close()
				})
			}
		})
	}
}

func TestSFTPFetcher(t *testing.T) {
	_, clientPriv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	clientSigner, err := ssh.NewSignerFromKey(clientPriv)
	if err != nil {
		t.Fatal(err)
	}
	block, err := ssh.MarshalPrivateKey(clientPriv, "")
	if err != nil {
		t.Fatal(err)
	}
	keyPEM := pem.EncodeToMemory(block)

	srv := startSFTPServer(t, clientSigner.PublicKey())
	dir := t.TempDir()
	content := testData(300_000) // several SFTP packets
	path := filepath.Join(dir, "input.bin")
	if err := os.WriteFile(path, content, 0o644); err != nil {
		t.Fatal(err)
	}
	uri := "sftp://jobmesh@" + srv.addr + filepath.ToSlash(path)
	sum := sha256.Sum256(content)
	ctx := context.Background()
	fingerprint := ssh.FingerprintSHA256(srv.hostKey)

	knownHosts := filepath.Join(t.TempDir(), "known_hosts")
	line := knownhosts.Line([]string{knownhosts.Normalize(srv.addr)}, srv.hostKey)
	if err := os.WriteFile(knownHosts, []byte(line+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	auths := map[string]SFTPConfig{
		"password+fingerprint": {Password: "secret", HostKeyFingerprint: fingerprint},
		"key+known_hosts":      {PrivateKey: keyPEM, KnownHostsFile: knownHosts},
	}
	for name, sc := range auths {
		t.Run(name, func(t *testing.T) {
			r := newTestRegistry(t, func(c *Config) { c.SFTP = sc })
			got, err := r.FetchVerified(ctx, uri, sum, int64(len(content)))
			if err != nil || !bytes.Equal(got, content) {
				t.Fatalf("FetchVerified: %d bytes, %v", len(got), err)
			}
			if _, err := r.Fetch(ctx, "sftp://jobmesh@"+srv.addr+filepath.ToSlash(filepath.Join(dir, "missing")), 1<<20); !errors.Is(err, ErrNotFound) {
				t.Fatalf("missing file: %v", err)
			}
			if _, err := r.Fetch(ctx, uri, int64(len(content))-1); !errors.Is(err, ErrTooLarge) {
				t.Fatalf("over limit: %v", err)
			}
		})
	}

	failures := map[string]SFTPConfig{
		"wrong password":    {Password: "nope", HostKeyFingerprint: fingerprint},
		"wrong fingerprint": {Password: "secret", HostKeyFingerprint: "SHA256:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"},
	}
	for name, sc := range failures {
		t.Run(name, func(t *testing.T) {
			r := newTestRegistry(t, func(c *Config) { c.SFTP = sc })
			if _, err := r.Fetch(ctx, uri, 1<<20); !errors.Is(err, ErrUnreachable) {
				t.Fatalf("Fetch = %v, want ErrUnreachable", err)
			}
		})
	}

	t.Run("unknown host", func(t *testing.T) {
		empty := filepath.Join(t.TempDir(), "known_hosts")
		if err := os.WriteFile(empty, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		r := newTestRegistry(t, func(c *Config) { c.SFTP = SFTPConfig{Password: "secret", KnownHostsFile: empty} })
		if _, err := r.Fetch(ctx, uri, 1<<20); !errors.Is(err, ErrUnreachable) {
			t.Fatalf("Fetch = %v, want ErrUnreachable", err)
		}
	})

	t.Run("bad URIs", func(t *testing.T) {
		r := newTestRegistry(t, func(c *Config) { c.SFTP = auths["password+fingerprint"] })
		for _, bad := range []string{
			"sftp://" + srv.addr + "/x",            // no user
			"sftp://jobmesh:pw@" + srv.addr + "/x", // password in URI
			"sftp://jobmesh@" + srv.addr,           // no path
		} {
			if _, err := r.Fetch(ctx, bad, 1<<20); !errors.Is(err, ErrInvalidURI) {
				t.Errorf("Fetch(%q) = %v, want ErrInvalidURI", bad, err)
			}
		}
	})

	t.Run("bad key", func(t *testing.T) {
		cfg := DefaultConfig()
		cfg.SFTP = SFTPConfig{PrivateKey: []byte("not a key"), HostKeyFingerprint: fingerprint}
		if _, err := New(cfg); err == nil {
			t.Fatal("New accepted a bad private key")
		}
	})
}

func TestSFTPFetcherHandshakeTimeout(t *testing.T) {
	// A server that accepts TCP but never speaks SSH: the dial timeout must
	// end the fetch.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var held []net.Conn
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			held = append(held, c)
		}
	})
	t.Cleanup(func() {
		ln.Close()
		wg.Wait()
		for _, c := range held {
			c.Close()
		}
	})
	r := newTestRegistry(t, func(c *Config) {
		c.DialTimeout = 200 * time.Millisecond
		c.SFTP = SFTPConfig{Password: "secret", HostKeyFingerprint: "SHA256:x"}
	})
	_, err = r.Fetch(context.Background(), "sftp://jobmesh@"+ln.Addr().String()+"/data", 1<<20)
	if !errors.Is(err, ErrUnreachable) {
		t.Fatalf("Fetch = %v, want ErrUnreachable", err)
	}
}
