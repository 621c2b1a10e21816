package fetch

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"syscall"
)

// A job's URIs come from whoever submits it, and the node that fetches
// them may sit inside a private network: without a check, an https://
// URI to 127.0.0.1, 10.x or a cloud metadata address makes the node a
// proxy into that network, and the error texts make its API a port
// scanner. The check runs on the resolved address at dial time, in the
// dialer's Control hook, so neither a DNS name that resolves to a private
// address (or rebinds to one after a first check) nor a redirect gets
// around it: every connection any fetcher opens goes through it.

// ErrForbiddenAddress is what the dial guard returns for a destination
// outside the public internet. The Registry reports it, like every other
// failure to connect, as the generic ErrUnreachable; only the debug log
// says which.
var ErrForbiddenAddress = errors.New("fetch: destination address not allowed")

// forbiddenPrefixes are the destinations refused unless
// Config.AllowPrivateAddresses: everything that is not a public unicast
// address.
var forbiddenPrefixes = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),          // "this network", unspecified
	netip.MustParsePrefix("10.0.0.0/8"),         // RFC 1918
	netip.MustParsePrefix("100.64.0.0/10"),      // CGNAT (and Alibaba's metadata 100.100.100.200)
	netip.MustParsePrefix("127.0.0.0/8"),        // loopback
	netip.MustParsePrefix("169.254.0.0/16"),     // link-local (cloud metadata 169.254.169.254)
	netip.MustParsePrefix("172.16.0.0/12"),      // RFC 1918
	netip.MustParsePrefix("192.0.0.0/24"),       // IETF protocol assignments (192.0.0.192 metadata)
	netip.MustParsePrefix("192.0.2.0/24"),       // documentation
	netip.MustParsePrefix("192.168.0.0/16"),     // RFC 1918
	netip.MustParsePrefix("198.18.0.0/15"),      // benchmarking
	netip.MustParsePrefix("198.51.100.0/24"),    // documentation
	netip.MustParsePrefix("203.0.113.0/24"),     // documentation
	netip.MustParsePrefix("224.0.0.0/4"),        // multicast
	netip.MustParsePrefix("240.0.0.0/4"),        // reserved, broadcast
	netip.MustParsePrefix("::/128"),             // unspecified
	netip.MustParsePrefix("::1/128"),            // loopback
	netip.MustParsePrefix("100::/64"),           // discard-only
	netip.MustParsePrefix("2001:db8::/32"),      // documentation
	netip.MustParsePrefix("fc00::/7"),           // unique local (RFC 4193; AWS metadata fd00:ec2::254)
	netip.MustParsePrefix("fe80::/10"),          // link-local
	netip.MustParsePrefix("fec0::/10"),          // site-local (deprecated)
	netip.MustParsePrefix("ff00::/8"),           // multicast
	netip.MustParsePrefix("64:ff9b:1::/48"),     // local-use NAT64
	netip.MustParsePrefix("::/96"),              // IPv4-compatible (deprecated)
	netip.MustParsePrefix("::ffff:0:0:0/96"),    // SIIT
	netip.MustParsePrefix("2001:10::/28"),       // ORCHID
	netip.MustParsePrefix("2001:20::/28"),       // ORCHIDv2
	netip.MustParsePrefix("5f00::/16"),          // SRv6 SIDs
	netip.MustParsePrefix("3fff::/20"),          // documentation
	netip.MustParsePrefix("2001:2::/48"),        // benchmarking
	netip.MustParsePrefix("2001::/32"),          // Teredo: the IPv4 end is obfuscated, so unchecked
	netip.MustParsePrefix("ff02::/16"),          // link-local multicast (inside ff00::/8; named for clarity)
	netip.MustParsePrefix("255.255.255.255/32"), // broadcast (inside 240/4; named for clarity)
}

// Prefixes that embed an IPv4 address: the embedded address is checked too,
// so that 64:ff9b::7f00:1 on a NAT64 network does not reach 127.0.0.1.
var (
	nat64     = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour = netip.MustParsePrefix("2002::/16")
)

// PublicAddress reports whether ip is a public unicast address that a
// fetch may connect to when private addresses are not allowed.
func PublicAddress(ip netip.Addr) bool {
	if !ip.IsValid() {
		return false
	}
	ip = ip.Unmap() // ::ffff:127.0.0.1 is 127.0.0.1
	if ip.Zone() != "" {
		return false // a scoped address is link-local by definition
	}
	for _, p := range forbiddenPrefixes {
		if p.Contains(ip) {
			return false
		}
	}
	switch {
	case nat64.Contains(ip):
		b := ip.As16()
		return PublicAddress(netip.AddrFrom4([4]byte(b[12:16])))
	case sixToFour.Contains(ip):
		b := ip.As16()
		return PublicAddress(netip.AddrFrom4([4]byte(b[2:6])))
	}
	return ip.IsGlobalUnicast()
}

// publicAddress is the check guardControl applies; a test swaps it to
// treat one loopback address as public.
var publicAddress = PublicAddress

// guardControl is a net.Dialer ControlContext that refuses connections to
// non-public addresses. It sees the address actually dialled, after DNS
// resolution.
func guardControl(_ context.Context, network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: %s %q: %w", ErrForbiddenAddress, network, address, err)
	}
	if !publicAddress(ap.Addr()) {
		return fmt.Errorf("%w: %s", ErrForbiddenAddress, ap.Addr())
	}
	return nil
}

// newDialer returns the dialer every network fetcher uses: with the guard
// unless cfg allows private addresses.
func newDialer(cfg Config) *net.Dialer {
	d := &net.Dialer{Timeout: cfg.DialTimeout}
	if !cfg.AllowPrivateAddresses {
		d.ControlContext = guardControl
	}
	return d
}

// connectError marks a failure to reach a source before it answered:
// refused, closed port, no route, a timeout, a forbidden address, a failed
// TLS or SSH handshake. The Registry logs the cause and returns the
// generic ErrUnreachable, so that a fetch cannot tell an open port from a
// closed one or a private address from a dead one.
type connectError struct{ cause error }

func (e *connectError) Error() string { return ErrUnreachable.Error() + ": " + e.cause.Error() }

// Unwrap keeps the cause for the Registry's log and for errors.Is inside
// the package; callers of the Registry never see a connectError.
func (e *connectError) Unwrap() []error { return []error{ErrUnreachable, e.cause} }

func cannotConnect(err error) error { return &connectError{cause: err} }
