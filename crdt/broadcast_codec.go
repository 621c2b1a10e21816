package crdt

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/ipfs/boxo/ipld/merkledag"
	blocks "github.com/ipfs/go-block-format"
	"github.com/ipfs/go-cid"
	crdtpb "github.com/ipfs/go-ds-crdt/pb"
	ipld "github.com/ipfs/go-ipld-format"
	"google.golang.org/protobuf/proto"
)

// maxAnnounceBytes bounds go-ds-crdt's head announcement inside a
// broadcast; a CID is well under 100 bytes, so this leaves room for
// MaxBroadcastHeads of them.
const maxAnnounceBytes = 64 << 10

// maxInlineBytes bounds the head blocks carried in one broadcast; heads
// beyond it are fetched over bitswap.
const maxInlineBytes = 256 << 10

// maxBroadcastBytes bounds one broadcast on the wire.
const maxBroadcastBytes = maxAnnounceBytes + maxInlineBytes + 1<<10

// inlineMagic starts a broadcast that carries its head blocks (version 1).
// A bare go-ds-crdt announcement never starts with it: its first byte is
// the tag of field 1 (0x0a), and "J" would be an unknown field 9.
var inlineMagic = []byte("JMB1")

// errBadBroadcast is wrapped by broadcast decoding errors.
var errBadBroadcast = errors.New("crdt: bad broadcast")

// inlineBlock is one head's DAG block carried in a broadcast.
type inlineBlock struct {
	cid  cid.Cid
	data []byte
}

// encodeBroadcast frames go-ds-crdt's announcement and the head blocks:
//
//	"JMB1" | uvarint len(announce) | announce |
//	uvarint n | n × (uvarint len(cid) | cid | uvarint len(block) | block)
func encodeBroadcast(announce []byte, blocks []inlineBlock) []byte {
	var b bytes.Buffer
	b.Write(inlineMagic)
	b.Write(binary.AppendUvarint(nil, uint64(len(announce))))
	b.Write(announce)
	b.Write(binary.AppendUvarint(nil, uint64(len(blocks))))
	for _, blk := range blocks {
		k := blk.cid.Bytes()
		b.Write(binary.AppendUvarint(nil, uint64(len(k))))
		b.Write(k)
		b.Write(binary.AppendUvarint(nil, uint64(len(blk.data))))
		b.Write(blk.data)
	}
	return b.Bytes()
}

// decodeBroadcast splits a broadcast into go-ds-crdt's announcement and the
// blocks it carries, each checked against its CID. A bare announcement
// (no frame) has no blocks.
func decodeBroadcast(data []byte) (announce []byte, blocks []inlineBlock, err error) {
	if len(data) > maxBroadcastBytes {
		return nil, nil, fmt.Errorf("%w: %d bytes", errBadBroadcast, len(data))
	}
	rest, framed := bytes.CutPrefix(data, inlineMagic)
	if !framed {
		return data, nil, nil
	}
	next := func(limit uint64) ([]byte, error) {
		n, k := binary.Uvarint(rest)
		if k <= 0 || n > limit || n > uint64(len(rest)-k) {
			return nil, fmt.Errorf("%w: bad length", errBadBroadcast)
		}
		out := rest[k : k+int(n)]
		rest = rest[k+int(n):]
		return out, nil
	}
	if announce, err = next(maxAnnounceBytes); err != nil {
		return nil, nil, err
	}
	n, k := binary.Uvarint(rest)
	if k <= 0 || n > maxBroadcastHeadsLimit {
		return nil, nil, fmt.Errorf("%w: bad block count", errBadBroadcast)
	}
	rest = rest[k:]
	for range n {
		kb, err := next(256)
		if err != nil {
			return nil, nil, err
		}
		c, err := cid.Cast(kb)
		if err != nil {
			return nil, nil, fmt.Errorf("%w: %w", errBadBroadcast, err)
		}
		blk, err := next(maxInlineBytes)
		if err != nil {
			return nil, nil, err
		}
		sum, err := c.Prefix().Sum(blk)
		if err != nil || !sum.Equals(c) {
			return nil, nil, fmt.Errorf("%w: block does not match %s", errBadBroadcast, c)
		}
		blocks = append(blocks, inlineBlock{cid: c, data: blk})
	}
	if len(rest) != 0 {
		return nil, nil, fmt.Errorf("%w: %d trailing bytes", errBadBroadcast, len(rest))
	}
	return announce, blocks, nil
}

// maxBroadcastHeadsLimit bounds the block count field before the
// configured MaxBroadcastHeads is applied.
const maxBroadcastHeadsLimit = 1 << 16

// validateBroadcast accepts only a go-ds-crdt head announcement with 1 to
// maxHeads well-formed CIDs, so garbage is dropped before it reaches the
// CRDT or is forwarded to other peers.
func validateBroadcast(data []byte, maxHeads int) error {
	_, err := checkBroadcast(data, maxHeads)
	return err
}

// decodedBroadcast is a broadcast that passed checkBroadcast.
type decodedBroadcast struct {
	announce []byte
	blocks   []inlineBlock
	heads    [][]byte // the announced heads' CIDs
}

// checkBroadcast decodes and checks a broadcast (validateBroadcast).
func checkBroadcast(wire []byte, maxHeads int) (decodedBroadcast, error) {
	data, blocks, err := decodeBroadcast(wire)
	if err != nil {
		return decodedBroadcast{}, err
	}
	if len(data) > maxAnnounceBytes {
		return decodedBroadcast{}, fmt.Errorf("announcement of %d bytes", len(data))
	}
	if len(blocks) > maxHeads {
		return decodedBroadcast{}, fmt.Errorf("%d blocks", len(blocks))
	}
	var msg crdtpb.CRDTBroadcast
	if err := proto.Unmarshal(data, &msg); err != nil {
		return decodedBroadcast{}, err
	}
	if len(msg.ProtoReflect().GetUnknown()) > 0 {
		return decodedBroadcast{}, fmt.Errorf("unknown fields")
	}
	if len(msg.Heads) == 0 || len(msg.Heads) > maxHeads {
		return decodedBroadcast{}, fmt.Errorf("%d heads", len(msg.Heads))
	}
	heads := make([][]byte, len(msg.Heads))
	for i, h := range msg.Heads {
		if _, err := cid.Cast(h.GetCid()); err != nil {
			return decodedBroadcast{}, err
		}
		heads[i] = h.GetCid()
	}
	return decodedBroadcast{announce: data, blocks: blocks, heads: heads}, nil
}

// inlineNode decodes a broadcast block as the DAG node go-ds-crdt wrote,
// under the CID it was announced with. go-ds-crdt writes CIDv1 dag-pb
// nodes, while a plain dag-pb decode gives every node a CIDv0 that would
// never match, leaving every announced block to be fetched over bitswap.
func inlineNode(blk inlineBlock) (ipld.Node, error) {
	if blk.cid.Type() != cid.DagProtobuf {
		return nil, fmt.Errorf("%w: %s is not dag-pb", errBadBroadcast, blk.cid)
	}
	raw, err := blocks.NewBlockWithCid(blk.data, blk.cid)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errBadBroadcast, err)
	}
	nd, err := merkledag.DecodeProtobufBlock(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errBadBroadcast, err)
	}
	if !nd.Cid().Equals(blk.cid) {
		return nil, fmt.Errorf("%w: block decodes as %s, announced as %s", errBadBroadcast, nd.Cid(), blk.cid)
	}
	return nd, nil
}

// splitHeads turns an announcement of several heads into one announcement
// per head. go-ds-crdt walks the heads of one announcement in parallel
// goroutines that share one error variable (a data race in v0.6.8's
// handleNext); with one head each, every announcement has one walker, and
// different announcements are still walked in parallel.
func splitHeads(announce []byte) [][]byte {
	var msg crdtpb.CRDTBroadcast
	if proto.Unmarshal(announce, &msg) != nil || len(msg.Heads) <= 1 {
		return [][]byte{announce}
	}
	out := make([][]byte, 0, len(msg.Heads))
	for _, h := range msg.Heads {
		one, err := proto.Marshal(&crdtpb.CRDTBroadcast{Heads: []*crdtpb.Head{{Cid: h.GetCid()}}})
		if err != nil {
			return [][]byte{announce}
		}
		out = append(out, one)
	}
	return out
}
