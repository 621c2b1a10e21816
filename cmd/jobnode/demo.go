package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"math/big"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/jobmesh/jobmesh/api"
	"github.com/jobmesh/jobmesh/dapp"
	"github.com/jobmesh/jobmesh/examples"
	"github.com/jobmesh/jobmesh/examples/mandelbrot/tiles"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/localmesh"
	"github.com/jobmesh/jobmesh/microjob"
	"github.com/jobmesh/jobmesh/node"
	"github.com/jobmesh/jobmesh/p2p"
	"github.com/jobmesh/jobmesh/processor"
	"github.com/jobmesh/jobmesh/records"
)

type demoOptions struct {
	processors int
	byzantine  int
	liar       string
	serve      bool
	json       bool
	dir        string
	out        string
	width      uint32
	height     uint32
	tile       uint32
	timeout    time.Duration
}

// demoSummary is what --json prints.
type demoSummary struct {
	JobID        string            `json:"job_id"`
	OutputCID    string            `json:"output_cid"`
	Verified     bool              `json:"verified"`
	Culprits     []string          `json:"culprits"`
	Processors   map[string]int    `json:"microjobs_by_processor"`
	Verifier     map[string]string `json:"verifier_hashes"`
	Picture      string            `json:"picture"`
	TileMap      string            `json:"tile_map"`
	SettlementTx string            `json:"settlement_tx"`
	Payouts      map[string]string `json:"payouts"`
	Refund       string            `json:"refund"`
	Seconds      float64           `json:"seconds"`
	// Members: with --serve, each member's repo, API and addresses.
	Members []demoMember `json:"members,omitempty"`
}

func newDemoCmd(g *globals) *cobra.Command {
	o := demoOptions{}
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Run a whole mesh in this process on 127.0.0.1 and compute a picture on it",
		Long: `demo starts a bootstrap node, processors and a submitting node in this process,
submits the Mandelbrot example job (WebAssembly, one tile per block), shows progress by
processor, waits until the results are verified, and writes the assembled picture and a
second picture showing which processor made which tile.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runDemo(cmd.Context(), g, o, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	f.IntVar(&o.processors, "processors", 4, "number of processors")
	f.IntVar(&o.byzantine, "byzantine", 0, "number of processors that return wrong output (they are caught and unpaid)")
	f.StringVar(&o.liar, "liar", "whole", "how the byzantine processors lie: whole (every block of their MicroJobs) or rational (about one block per MicroJob, never in a check: caught with probability 1/K per MicroJob)")
	f.BoolVar(&o.serve, "serve", false, "keep the mesh running after the job and print each node's API and swarm addresses")
	f.BoolVar(&o.json, "json", false, "print a machine-readable summary on stdout (progress goes to stderr)")
	f.StringVar(&o.dir, "dir", "", "directory for the members' repos (default: a temporary directory, removed at exit)")
	f.StringVar(&o.out, "out", ".", "directory for mandelbrot.png and tiles-by-processor.png")
	f.Uint32Var(&o.width, "width", 512, "picture width in pixels")
	f.Uint32Var(&o.height, "height", 384, "picture height in pixels")
	f.Uint32Var(&o.tile, "tile", 64, "tile side in pixels (one tile per block)")
	f.DurationVar(&o.timeout, "timeout", 5*time.Minute, "give up if the job is not verified and settled within this time")
	return cmd
}

func runDemo(ctx context.Context, g *globals, o demoOptions, stdout, stderr io.Writer) (err error) {
	if o.processors < 2 {
		return errors.New("--processors must be at least 2")
	}
	if o.byzantine < 0 || o.byzantine >= o.processors-1 {
		return fmt.Errorf("--byzantine must be between 0 and %d (two processors must stay honest to resolve a dispute)", o.processors-2)
	}
	if _, err := demoLiar(o.liar); err != nil {
		return err
	}
	start := time.Now()
	say := stdout
	if o.json {
		say = stderr
	}
	if o.dir == "" {
		if o.dir, err = os.MkdirTemp("", "jobmesh-demo-"); err != nil {
			return err
		}
		defer os.RemoveAll(o.dir)
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return err
	}

	fmt.Fprintf(say, "building the Mandelbrot example for WebAssembly (GOOS=wasip1)...\n")
	code, err := examples.Build(ctx, "mandelbrot")
	if err != nil {
		return err
	}
	params := tiles.Params{Width: o.width, Height: o.height, TileWidth: o.tile, TileHeight: o.tile, MaxIter: 256, View: tiles.DefaultView}
	data, err := params.Job()
	if err != nil {
		return err
	}

	fmt.Fprintf(say, "starting a mesh on 127.0.0.1: 1 bootstrap node, %d processors (%d byzantine), 1 submitting node\n", o.processors, o.byzantine)
	mesh, err := startDemoMesh(ctx, g, o)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, mesh.Close()) }()
	client := mesh.Members[len(mesh.Members)-1]
	names, procIDs := demoProcessors(mesh, o)

	spec := dapp.Spec{
		Code: code, Data: data,
		Slicing:  jobs.Slicing{BlockSize: tiles.DescriptorSize, MicroJobs: 4, BlocksPerMicro: demoBlocksPerMicro},
		Price:    big.NewInt(1_000_000_000_000_000), // 0.001 ETH
		Deadline: time.Now().Add(time.Hour),
		Output:   jobs.Output{Kind: jobs.OutputPNGGrid, Columns: uint32(params.Columns())},
	}
	info, err := client.DApp.Submit(ctx, spec)
	if err != nil {
		return err
	}
	plan, err := jobs.Slice(info)
	if err != nil {
		return err
	}
	id := info.ID()
	fmt.Fprintf(say, "submitted job %s: %d tiles in %d MacroJobs, %d MicroJobs and %d verifiers, drawn once they are committed\n",
		id, plan.NumBlocks, len(plan.Macros), plan.NumMicroJobs(), len(plan.Macros))

	// Progress: commitments by processor, read from the submitting
	// node's replicated store.
	jctx, jcancel := context.WithTimeout(ctx, o.timeout)
	defer jcancel()
	if _, err := waitWithProgress(jctx, client, id, plan.NumWithChecks(), names, say); err != nil {
		sayStalled(ctx, mesh, client, id, names, say)
		return fmt.Errorf("waiting for the verdict: %w", err)
	}
	fmt.Fprintf(say, "verified; waiting for the processors' signatures and the escrow release...\n")
	res, err := client.DApp.Wait(jctx, id, 200*time.Millisecond)
	if err != nil {
		sayStalled(ctx, mesh, client, id, names, say)
		return fmt.Errorf("waiting for the settlement: %w", err)
	}
	fmt.Fprintf(say, "verified and settled in %s\n", time.Since(start).Round(100*time.Millisecond))

	picture, tileMap, err := writePictures(ctx, client, info, plan, res, procIDs, o.out)
	if err != nil {
		return err
	}
	sum := newDemoSummary(id, res, picture, tileMap, time.Since(start))
	if o.serve {
		stopServing, err := serveDemo(g, mesh, &sum)
		defer func() { err = errors.Join(err, stopServing()) }()
		if err != nil {
			return err
		}
	}
	if o.json {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(sum); err != nil {
			return err
		}
	} else {
		printSummary(stdout, sum, names)
	}
	if !o.serve {
		return nil
	}
	printServing(say, sum.Members)
	<-ctx.Done()
	return nil
}

// startDemoMesh starts the demo's mesh on the embedded dev chain, with
// short timers, the last o.byzantine processors tampering with their
// outputs.
func startDemoMesh(ctx context.Context, g *globals, o demoOptions) (*localmesh.Mesh, error) {
	return localmesh.Start(ctx, localmesh.Options{
		Processors: o.processors,
		Clients:    1,
		Dir:        o.dir,
		// The embedded dev chain: go-ethereum's simulated backend, the
		// escrow deployed, every wallet funded, every processor staked.
		Chain:  &localmesh.ChainOptions{},
		Logger: g.demoLogger(),
		// Loopback, on TCP and QUIC, as a daemon listens by default.
		P2P: func(_ *localmesh.Member, c *p2p.Config) {
			c.ListenAddrs = []string{"/ip4/127.0.0.1/tcp/0", "/ip4/127.0.0.1/udp/0/quic-v1"}
		},
		Processor: func(m *localmesh.Member, pc *processor.Config) {
			pc.Poll = 250 * time.Millisecond
			pc.DiscloseGrace = 5 * time.Second
			pc.Room.Queue.ProcessingTimeout = 20 * time.Second
			pc.Room.Queue.OwnerTimeout = 3 * time.Second
			pc.Room.Queue.Rebroadcast = 500 * time.Millisecond
			pc.Room.LockTTL = 20 * time.Second
			if m.Index > o.processors-o.byzantine {
				pc.Tamper, _ = demoLiar(o.liar)
			}
		},
	})
}

// demoBlocksPerMicro is K of the demo's job.
const demoBlocksPerMicro = 4

// demoLiar is the output rewrite of a byzantine processor of kind: whole
// lies in every block it runs; rational lies where a lie is cheapest to
// hide, in the blocks b with b mod K = 0 (about one per MicroJob), and
// never in a verifier or re-run, where it would stand out. The checks are
// hidden until its results are committed, so it cannot aim its lies at
// the unchecked blocks: each MicroJob it lies in is caught with
// probability (lied blocks)/K.
func demoLiar(kind string) (func(block uint64, check bool, out []byte) []byte, error) {
	switch kind {
	case "whole":
		return func(_ uint64, _ bool, out []byte) []byte { return append(out, 0x42) }, nil
	case "rational":
		return localmesh.RationalLiar(demoBlocksPerMicro), nil
	}
	return nil, fmt.Errorf("--liar must be whole or rational, not %q", kind)
}

// demoWarnings is how many of each node's latest warnings a demo that
// gives up shows.
const demoWarnings = 8

// sayStalled writes what the submitting node holds of job id, by record
// type, and each member's latest warnings (the operator view's,
// node.Node.Operator), which the demo's quiet log leaves out: what a demo
// that gives up was waiting on.
func sayStalled(ctx context.Context, mesh *localmesh.Mesh, client *localmesh.Member, id jobs.ID, names map[string]string, say io.Writer) {
	if recs, err := client.Store.Query(ctx, records.JobKey(id)+"/"); err == nil {
		types := map[string]int{}
		for _, r := range recs {
			types[r.Type]++
		}
		fmt.Fprintf(say, "the submitting node holds of the job, by record type: %v\n", types)
	}
	fmt.Fprintln(say, "the mesh's latest warnings:")
	for _, m := range mesh.Running() {
		op, err := m.Operator(ctx)
		if err != nil {
			continue
		}
		name := names[m.Host.ID().String()]
		if name == "" {
			name = string(m.Role)
		}
		ws := op.Warnings[max(0, len(op.Warnings)-demoWarnings):]
		for _, w := range ws {
			keys := slices.Sorted(maps.Keys(w.Attrs))
			attrs := make([]string, len(keys))
			for i, k := range keys {
				attrs[i] = k + "=" + w.Attrs[k]
			}
			fmt.Fprintf(say, "  %s %s %s: %s %s\n", w.Time.Format("15:04:05.000"), name, w.Level, w.Message, strings.Join(attrs, " "))
		}
	}
}

// demoProcessors names the mesh's processors p<index>, marking the
// byzantine ones, and lists their peer IDs.
func demoProcessors(mesh *localmesh.Mesh, o demoOptions) (map[string]string, []string) {
	names := map[string]string{}
	var procIDs []string
	for _, m := range mesh.Members {
		if m.Role == "processor" {
			id := m.Host.ID().String()
			tag := ""
			if m.Index > o.processors-o.byzantine {
				tag = " (byzantine)"
			}
			names[id] = fmt.Sprintf("p%d%s", m.Index, tag)
			procIDs = append(procIDs, id)
		}
	}
	return names, procIDs
}

// newDemoSummary summarizes job id's result res, after elapsed.
func newDemoSummary(id jobs.ID, res dapp.Result, picture, tileMap string, elapsed time.Duration) demoSummary {
	sum := demoSummary{
		JobID: id.String(), OutputCID: res.Output.String(), Verified: res.Verdict.Verified,
		Culprits: res.Culprits, Processors: map[string]int{}, Verifier: map[string]string{},
		Picture: picture, TileMap: tileMap, Payouts: map[string]string{}, Seconds: elapsed.Seconds(),
	}
	for p, n := range res.Verdict.Counts {
		sum.Processors[p] = n
	}
	if rel := res.Release; rel != nil {
		sum.SettlementTx = rel.TxHash.Hex()
		sum.Refund = rel.Refund.String()
		for i, p := range rel.Payees {
			sum.Payouts[strings.ToLower(p.Hex())] = rel.Amounts[i].String()
		}
	}
	for m, hs := range res.Verdict.VerifierHashes {
		sum.Verifier[fmt.Sprint(m)] = strings.Join(hs, ",")
	}
	return sum
}

func waitWithProgress(ctx context.Context, client *localmesh.Member, id jobs.ID, total int, names map[string]string, say io.Writer) (dapp.Result, error) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	last := ""
	for {
		res, ok, err := dapp.LoadStatus(ctx, client.Store, client.IPFS, id)
		if err != nil {
			return res, err
		}
		if ok {
			return res, nil
		}
		recs, err := client.Store.Query(ctx, records.JobKey(id)+"/")
		if err == nil {
			done := map[string]bool{}
			by := map[string]int{}
			for _, r := range recs {
				if r.Type == records.CommitType {
					k, err := records.Parse(r.Key)
					if err == nil && k.Type == records.CommitType && !done[k.Micro.String()+k.Peer] {
						done[k.Micro.String()+k.Peer] = true
						by[names[k.Peer]]++
					}
				}
			}
			micros := map[string]bool{}
			for k := range done {
				micros[k[:64]] = true
			}
			line := fmt.Sprintf("  MicroJobs done %d/%d  %s", len(micros), total, formatCounts(by))
			if line != last {
				fmt.Fprintln(say, line)
				last = line
			}
		}
		select {
		case <-ctx.Done():
			return dapp.Result{}, ctx.Err()
		case <-tick.C:
		}
	}
}

func formatCounts(by map[string]int) string {
	keys := make([]string, 0, len(by))
	for k := range by {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s:%d", k, by[k])
	}
	return strings.Join(parts, " ")
}

// writePictures fetches the assembled picture and draws the tile map from
// the accepted results: which processor's result each tile came from, in
// the colours of the processors' member order.
func writePictures(ctx context.Context, client *localmesh.Member, info *jobs.JobInfo, plan *jobs.Plan, res dapp.Result, procs []string, out string) (string, string, error) {
	tmp, err := os.MkdirTemp("", "jobmesh-demo-out-")
	if err != nil {
		return "", "", err
	}
	defer os.RemoveAll(tmp)
	if err := client.IPFS.Get(ctx, res.Output, filepath.Join(tmp, "output")); err != nil {
		return "", "", err
	}
	png, err := os.ReadFile(filepath.Join(tmp, "output", microjob.OutputFileName(info.Output.Kind)))
	if err != nil {
		return "", "", err
	}
	picture := filepath.Join(out, "mandelbrot.png")
	if err := os.WriteFile(picture, png, 0o644); err != nil {
		return "", "", err
	}
	m, _, err := microjob.TileMap(ctx, info, plan, res.Verdict, client.IPFS, procs)
	if err != nil {
		return "", "", err
	}
	tileMap := filepath.Join(out, "tiles-by-processor.png")
	if err := os.WriteFile(tileMap, m, 0o644); err != nil {
		return "", "", err
	}
	return picture, tileMap, nil
}

func printSummary(w io.Writer, s demoSummary, names map[string]string) {
	fmt.Fprintf(w, "\njob          %s\n", s.JobID)
	fmt.Fprintf(w, "output       ipfs://%s\n", s.OutputCID)
	fmt.Fprintf(w, "verified     %v\n", s.Verified)
	macros := make([]string, 0, len(s.Verifier))
	for m := range s.Verifier {
		macros = append(macros, m)
	}
	sort.Strings(macros)
	for _, m := range macros {
		hs := strings.Split(s.Verifier[m], ",")
		fmt.Fprintf(w, "verifier     MacroJob %s: %d block hashes, first %s…\n", m, len(hs), hs[0][:16])
	}
	if len(s.Culprits) == 0 {
		fmt.Fprintf(w, "culprits     none\n")
	}
	for _, c := range s.Culprits {
		fmt.Fprintf(w, "culprit      %s %s: caught by a verifier MicroJob, unpaid, its MicroJobs redone\n", names[c], c)
	}
	ids := make([]string, 0, len(s.Processors))
	for p := range s.Processors {
		ids = append(ids, p)
	}
	sort.Strings(ids)
	for _, p := range ids {
		fmt.Fprintf(w, "credited     %-4s %s  %d MicroJobs\n", names[p], p, s.Processors[p])
	}
	if s.SettlementTx != "" {
		fmt.Fprintf(w, "settlement   %s (escrow released on the dev chain)\n", s.SettlementTx)
		wallets := make([]string, 0, len(s.Payouts))
		for a := range s.Payouts {
			wallets = append(wallets, a)
		}
		sort.Strings(wallets)
		for _, a := range wallets {
			fmt.Fprintf(w, "payout       %s  %s wei\n", a, s.Payouts[a])
		}
		fmt.Fprintf(w, "refund       %s wei to the creator\n", s.Refund)
	}
	fmt.Fprintf(w, "picture      %s\n", s.Picture)
	fmt.Fprintf(w, "tile map     %s\n", s.TileMap)
	fmt.Fprintf(w, "took         %.1fs\n", s.Seconds)
}

// demoMember is one member of a served demo mesh, as --json --serve
// prints it.
type demoMember struct {
	Role      string   `json:"role"`
	Index     int      `json:"index"`
	PeerID    string   `json:"peer_id"`
	Repo      string   `json:"repo"`
	API       string   `json:"api"`       // base URL; also in the repo's api file
	Dashboard string   `json:"dashboard"` // a one-time login link
	Swarm     []string `json:"swarm"`     // full multiaddrs, TCP and QUIC
}

// serveDemo starts an HTTP API for each member of mesh, writes its address
// into the member's repo (its api file, as a daemon does, so that
// 'jobnode job ... --repo MEMBER' reaches it) and lists the members in
// sum. stop shuts the APIs down and removes the api files.
func serveDemo(g *globals, mesh *localmesh.Mesh, sum *demoSummary) (stop func() error, err error) {
	var (
		servers []*api.Server
		files   []string
	)
	stop = func() error {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		var errs []error
		for _, s := range servers {
			errs = append(errs, s.Shutdown(sctx))
		}
		for _, f := range files {
			if err := os.Remove(f); err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
			}
		}
		return errors.Join(errs...)
	}
	for _, m := range mesh.Members {
		cfg := m.Config.API
		if cfg.Token, err = node.ReadAPIToken(m.Dir); err != nil {
			return stop, err
		}
		h, err := api.New(m.APIDeps(), cfg)
		if err != nil {
			return stop, err
		}
		s, err := api.Listen("127.0.0.1:0", h, cfg, g.demoLogger())
		if err != nil {
			return stop, err
		}
		servers = append(servers, s)
		file := filepath.Join(m.Dir, node.APIFile)
		if err := os.WriteFile(file, []byte(s.Addr()+"\n"), 0o600); err != nil {
			return stop, fmt.Errorf("writing the api file of %s: %w", m.Dir, err)
		}
		files = append(files, file)
		login, _ := h.LoginURL(s.BaseURL())
		dm := demoMember{Role: string(m.Role), Index: m.Index, PeerID: m.Host.ID().String(), Repo: m.Dir,
			API: s.BaseURL(), Dashboard: login}
		for _, a := range m.Host.FullAddrs() {
			dm.Swarm = append(dm.Swarm, a.String())
		}
		sum.Members = append(sum.Members, dm)
	}
	return stop, nil
}

// printServing lists the served members for people.
func printServing(say io.Writer, members []demoMember) {
	fmt.Fprintln(say, "\nserving the mesh; press Ctrl-C to stop ('jobnode job list --repo REPO' reaches a member)")
	for _, m := range members {
		fmt.Fprintf(say, "%-9s %d  %s\n          repo  %s\n          api   %s\n          ui    %s\n", m.Role, m.Index, m.PeerID, m.Repo, m.API, m.Dashboard)
		for _, a := range m.Swarm {
			fmt.Fprintf(say, "          swarm %s\n", a)
		}
	}
}
