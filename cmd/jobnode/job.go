package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/jobmesh/jobmesh/apiv1"
	"github.com/jobmesh/jobmesh/meshclient"
	"github.com/jobmesh/jobmesh/wasm"
)

func newJobCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "job",
		Short: "Submit, follow, fetch and cancel jobs through the running node",
	}
	cmd.AddCommand(newJobSubmitCmd(g), newJobStatusCmd(g), newJobListCmd(g), newJobWaitCmd(g), newJobGetCmd(g), newJobCancelCmd(g),
		newJobDescribeCmd(g), newJobLogsCmd(g))
	return cmd
}

// source turns a --code or --data argument into a job source: a URI as it
// is, a local file uploaded to the node first.
func source(ctx context.Context, c *meshclient.Client, arg string) (apiv1.Source, error) {
	if isURI(arg) {
		return apiv1.Source{URI: arg}, nil
	}
	f, err := os.Open(arg)
	if err != nil {
		return apiv1.Source{}, err
	}
	defer f.Close()
	return upload(ctx, c, arg, f)
}

// upload sends r, read from the local file name, to the node.
func upload(ctx context.Context, c *meshclient.Client, name string, r io.Reader) (apiv1.Source, error) {
	content, err := c.Upload(ctx, r)
	if err != nil {
		return apiv1.Source{}, fmt.Errorf("uploading %s: %w", name, err)
	}
	return apiv1.Source{URI: content.URI, SHA256: content.SHA256}, nil
}

func newJobSubmitCmd(g *globals) *cobra.Command {
	var (
		code, data, price, output  string
		split                      string
		req                        apiv1.SubmitRequest
		deadline                   time.Duration
		wait, asJSON, dryRun       bool
		maxMicro                   uint64
		fetchTimeout, blockTimeout time.Duration
		blockMemory, blockOutput   uint32
	)
	cmd := &cobra.Command{
		Use:   "submit",
		Short: "Submit a job: code and data from local files (uploaded to the node) or URIs; the node funds its escrow",
		Args:  cobra.NoArgs,
		Long: `Submit a job. The flags are checked before anything is uploaded: a local
--code file must be a WebAssembly WASI command (the magic and version, a
_start export, and only imports the sandbox provides), and --price takes
wei as a decimal integer or an exact scientific form (1e15), at least
2.1e13 wei. A job ID printed here, or any unique prefix of at least 4 hex
digits, names the job in the other job commands.

Before submitting, the plan is printed on stderr: the blocks, MacroJobs,
MicroJobs (regular and verifiers), the runs and the price per run. A plan
of more than --max-microjobs MicroJobs is refused. --dry-run prints the
plan on stdout and submits nothing; with local files it needs no node.

` + exitCodesHelp + `
(The job's codes apply with --wait.)`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			if err := checkSubmitFlags(ctx, &req, code, data, price); err != nil {
				return err
			}
			var packed *bytes.Reader
			switch split {
			case splitBytes:
			case splitWords:
				var err error
				if packed, err = splitData(data, req.Slicing.BlockSize); err != nil {
					return err
				}
			default:
				return flagError("split", "%q: want %s or %s", split, splitBytes, splitWords)
			}
			if err := setFetchTimeout(&req, fetchTimeout); err != nil {
				return err
			}
			if err := setLimits(&req, blockTimeout, blockMemory, blockOutput); err != nil {
				return err
			}
			req.Output = output
			if deadline > 0 {
				req.Deadline = time.Now().Add(deadline).UTC()
			}
			out := cmd.OutOrStdout()
			plan, known, err := localPlan(req, data)
			if packed != nil {
				// The blocks are cut from the packed text, not the file.
				plan, known, err = planOf(req, uint64(packed.Size())), true, nil
			}
			if err != nil {
				return err
			}
			if known {
				if err := checkPlan(plan, maxMicro); err != nil {
					return err
				}
				if dryRun {
					return showPlan(out, plan, asJSON)
				}
			}
			c, err := g.client()
			if err != nil {
				return err
			}
			if req.Code, err = source(ctx, c, code); err != nil {
				return err
			}
			if packed != nil {
				req.Data, err = upload(ctx, c, data, packed)
			} else {
				req.Data, err = source(ctx, c, data)
			}
			if err != nil {
				return err
			}
			ticker := time.NewTicker(waitNoteEvery)
			defer ticker.Stop()
			stop := noteWaiting(cmd.ErrOrStderr(), remoteSources(code, data, req), fetchTimeout, ticker.C)
			defer stop()
			if !known {
				if plan, err = remotePlan(ctx, c, req); err != nil {
					return err
				}
				if err := checkPlan(plan, maxMicro); err != nil {
					return err
				}
				if dryRun {
					return showPlan(out, plan, asJSON)
				}
			}
			printPlan(cmd.ErrOrStderr(), plan)
			j, err := c.Submit(ctx, req)
			stop()
			if err != nil {
				return err
			}
			if wait {
				if !asJSON {
					fmt.Fprintln(out, j.ID)
				}
				return follow(ctx, c, j.ID, out, cmd.ErrOrStderr(), asJSON)
			}
			if asJSON {
				return printJSON(out, j)
			}
			fmt.Fprintln(out, j.ID)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&code, "code", "", "the WebAssembly module: a local file or a URI (ipfs://, https://, ...)")
	f.StringVar(&data, "data", "", "the input data: a local file or a URI")
	f.Uint64Var(&req.Slicing.BlockSize, "block-size", 0, "bytes per block (required)")
	f.StringVar(&price, "price", "", "the escrow in wei: 1000000000000000 or 1e15, at least 2.1e13 (required)")
	f.Uint32Var(&req.Slicing.MicroJobs, "microjobs", 0, "regular MicroJobs per MacroJob, N (default 10)")
	f.Uint32Var(&req.Slicing.BlocksPerMicro, "blocks-per-micro", 0, "blocks per regular MicroJob, K (default 10)")
	f.Uint32Var(&req.Slicing.VerifierBlocks, "verifier-blocks", 0, "blocks in the verifier MicroJob, K' (default min(K, N))")
	f.Uint32Var(&req.Requirements.Replicas, "replicas", 0, "processors of one card model that run each MicroJob, R (default 1)")
	f.StringVar(&req.Requirements.GPUModel, "gpu-model", "", "card model the processors must have (default any)")
	f.Uint64Var(&req.Requirements.MinVRAMMiB, "min-vram-mib", 0, "GPU memory the processors must have, in MiB")
	f.StringSliceVar(&req.Requirements.ModelCIDs, "model", nil, "CID of a model the code needs (repeat for several)")
	f.StringVar(&output, "output", "", "output assembly: concat (default) or png-grid")
	f.StringVar(&split, "split", splitBytes, "how the local --data file is cut into blocks: bytes (every --block-size bytes) or words (text cut only between words, each block padded with spaces to --block-size; for word-based jobs such as the wordcount example)")
	f.Uint32Var(&req.Columns, "columns", 0, "png-grid columns")
	f.DurationVar(&deadline, "deadline", 0, "time the job may take (default 1h)")
	f.BoolVar(&wait, "wait", false, "follow the job to its end with a progress bar")
	f.BoolVar(&asJSON, "json", false, "print the (final) job as JSON; with --dry-run, the plan")
	f.BoolVar(&dryRun, "dry-run", false, "check the job and print its plan (blocks, MacroJobs, MicroJobs, price per run); submit nothing")
	f.DurationVar(&blockTimeout, "block-timeout", 0, "time one block's run may take, below the processors' 30s (default: theirs); a processor allowing less does not take the job")
	f.Uint32Var(&blockMemory, "block-memory", 0, "memory of one block's run in MiB, below the processors' 256 (default: theirs)")
	f.Uint32Var(&blockOutput, "block-output", 0, "output of one block's run in MiB, below the processors' 64 (default: theirs)")
	f.DurationVar(&fetchTimeout, "fetch-timeout", defaultFetchTimeout, "how long the node may take to read --code or --data given by URI (ipfs://, https://, ...); 0: the node's limit")
	f.Uint64Var(&maxMicro, "max-microjobs", defaultMaxMicroJobs, "refuse a plan of more MicroJobs than this (0: no limit)")
	return cmd
}

// checkSubmitFlags checks job submit's flags, each error by its flag's
// name, and the module of a local --code file, before anything reaches the
// node; it sets req's price.
func checkSubmitFlags(ctx context.Context, req *apiv1.SubmitRequest, code, data, price string) error {
	switch {
	case code == "":
		return flagError("code", "missing: give the WebAssembly module, a local file or a URI")
	case data == "":
		return flagError("data", "missing: give the input data, a local file or a URI")
	case req.Slicing.BlockSize == 0:
		return flagError("block-size", "missing: give the bytes per block")
	}
	p, err := parsePrice(price)
	if err != nil {
		return err
	}
	req.PriceWei = p.String()
	if isURI(code) {
		return nil // the node reads it and checks the module (POST /v1/jobs)
	}
	b, err := os.ReadFile(code)
	if err != nil {
		return usageError(fmt.Errorf("--code: %w", err))
	}
	if err := wasm.Check(ctx, b); err != nil {
		if ce, ok := errors.AsType[*wasm.CheckError](err); ok {
			return usageError(fmt.Errorf("--code %s: %s", code, ce.Reason))
		}
		return fmt.Errorf("--code %s: %w", code, err)
	}
	return nil
}

// follow waits for a job, showing one updating progress line unless
// asJSON, and prints the end: JSON, or the output CID, settlement and
// payouts. An undecided job is waited for all the same (a late re-run may
// decide it, else its deadline refunds it), each undecided block said once,
// on errOut when asJSON. Its error, for a job that ended other than
// verified, carries the exit code that says how (jobEnd).
func follow(ctx context.Context, c *meshclient.Client, id string, out, errOut io.Writer, asJSON bool) error {
	said := map[string]bool{}
	onChange := func(j apiv1.Job) {
		if !asJSON {
			fmt.Fprintf(out, "\r%s", progressLine(j))
		}
		note := out
		if asJSON {
			note = errOut
		}
		sayUndecided(note, j, said, !asJSON)
	}
	j, err := c.Wait(ctx, id, onChange)
	if !asJSON {
		fmt.Fprintln(out)
	}
	if err != nil {
		return err
	}
	if asJSON {
		if err := printJSON(out, j); err != nil {
			return err
		}
	} else {
		printEnd(out, j)
	}
	return jobEnd(j)
}

// progressLine is the job's progress on one line of fixed width: a bar of
// committed MicroJobs, the counts and the state.
func progressLine(j apiv1.Job) string {
	const width = 30
	filled := 0
	if j.MicroJobs > 0 {
		filled = min(width, j.Committed*width/j.MicroJobs)
	}
	return fmt.Sprintf("[%s%s] %d/%d MicroJobs committed, %d disclosed  %-10s", strings.Repeat("#", filled),
		strings.Repeat(".", width-filled), j.Committed, j.MicroJobs, j.Disclosed, j.State)
}

// sayUndecided tells, when job j is undecided, why, once for each block
// not in said (which it updates); midLine: the cursor is at the end of the
// progress line.
func sayUndecided(out io.Writer, j apiv1.Job, said map[string]bool, midLine bool) {
	if j.State != apiv1.JobUndecided {
		return
	}
	var lines []string
	for _, u := range j.Undecided {
		if l := undecidedLine(u); !said[l] {
			said[l] = true
			lines = append(lines, l)
		}
	}
	if len(lines) == 0 {
		return
	}
	if midLine {
		fmt.Fprintln(out)
	}
	fmt.Fprintf(out, "job %s is undecided: no verdict can follow unless a late re-run decides it; its deadline refunds it\n", j.ID)
	for _, l := range lines {
		fmt.Fprintln(out, l)
	}
}

// undecidedLine is block u on one line: its kind, sides, votes by hash
// (shortened) and the reason.
func undecidedLine(u apiv1.UndecidedBlock) string {
	var votes []string
	for _, h := range slices.Sorted(maps.Keys(u.Votes)) {
		short := h
		if len(short) > 12 {
			short = short[:12]
		}
		votes = append(votes, fmt.Sprintf("%s=%d", short, u.Votes[h]))
	}
	return fmt.Sprintf("undecided block %d (%s) sides %s votes %s: %s", u.Block, u.Kind,
		strings.Join(u.Sides, " "), strings.Join(votes, " "), u.Reason)
}

func printEnd(out io.Writer, j apiv1.Job) {
	fmt.Fprintf(out, "state %s\n", j.State)
	printResult(out, j)
}

// printResult writes job j's failure, undecided blocks, verdict, output,
// culprits, holders and settlement, each that it has.
func printResult(out io.Writer, j apiv1.Job) {
	if f := j.Failure; f != nil {
		fmt.Fprintf(out, "failure %s\nreason %s\n", f.Kind, f.Reason)
		if f.Micro != "" {
			fmt.Fprintf(out, "microjob %s\n", f.Micro)
		}
		if len(f.Reports) > 0 {
			fmt.Fprintf(out, "reported by %s\n", strings.Join(f.Reports, " "))
		}
		if f.Stderr != "" {
			fmt.Fprintf(out, "stderr:\n%s\n", strings.TrimRight(f.Stderr, "\n"))
		}
	}
	for _, u := range j.Undecided {
		fmt.Fprintln(out, undecidedLine(u))
	}
	if j.OutputCID != "" {
		fmt.Fprintf(out, "verified %v\noutput %s\n", j.Verified, j.OutputCID)
	}
	if len(j.Culprits) > 0 {
		fmt.Fprintf(out, "culprits %s\n", strings.Join(j.Culprits, " "))
	}
	if len(j.Holders) > 0 {
		fmt.Fprintf(out, "holders %s\n", strings.Join(j.Holders, " "))
	}
	if j.SettlementTx != "" {
		fmt.Fprintf(out, "settlement %s\n", j.SettlementTx)
		for _, w := range slices.Sorted(maps.Keys(j.Payouts)) {
			fmt.Fprintf(out, "payout %s %s wei\n", w, j.Payouts[w])
		}
		fmt.Fprintf(out, "refund %s wei\n", j.RefundWei)
	}
}

func newJobStatusCmd(g *globals) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "status ID",
		Short: "Show one job",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := g.client()
			if err != nil {
				return err
			}
			id, err := resolveJobID(cmd.Context(), c, args[0])
			if err != nil {
				return err
			}
			j, err := c.Job(cmd.Context(), id)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if asJSON {
				if err := printJSON(out, j); err != nil || j.State != apiv1.JobFailed {
					return err
				}
				return jobEnd(j) // exit 3, as job wait
			}
			fmt.Fprintf(out, "job %s\ncreator %s\nprice %s wei\ndeadline %s\ncode %s\ndata %s (%d bytes)\n",
				j.ID, j.Creator, j.PriceWei, j.Deadline.Format(time.RFC3339), j.CodeURI, j.DataURI, j.DataSize)
			fmt.Fprintf(out, "progress %s\nmine %v\n", strings.TrimSpace(progressLine(j)), j.Mine)
			printEnd(out, j)
			if j.State == apiv1.JobFailed {
				return jobEnd(j) // exit 3, as job wait
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func newJobListCmd(g *globals) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the jobs the node knows, newest first",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := g.client()
			if err != nil {
				return err
			}
			js, err := c.Jobs(cmd.Context())
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(cmd.OutOrStdout(), js)
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tSTATE\tMICROJOBS\tPRICE WEI\tMINE\tUPDATED")
			for _, j := range js {
				fmt.Fprintf(tw, "%s\t%s\t%d/%d\t%s\t%v\t%s\n", j.ID, j.State, j.Committed, j.MicroJobs, j.PriceWei, j.Mine, j.Updated.Format(time.RFC3339))
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func newJobWaitCmd(g *globals) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "wait ID",
		Short: "Follow a job to its end with a progress bar; the exit code says how it ended",
		Long: `Follow a job (its ID or a unique prefix of at least 4 hex digits) to its end
with a progress bar, then print the end: the state, the output CID, the
settlement and payouts. An undecided job is followed on: a late re-run may
decide it, else its deadline refunds it.

` + exitCodesHelp,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := g.client()
			if err != nil {
				return err
			}
			id, err := resolveJobID(cmd.Context(), c, args[0])
			if err != nil {
				return err
			}
			return follow(cmd.Context(), c, id, cmd.OutOrStdout(), cmd.ErrOrStderr(), asJSON)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the final job as JSON")
	return cmd
}

func newJobGetCmd(g *globals) *cobra.Command {
	var dir, merge string
	cmd := &cobra.Command{
		Use:   "get ID -o DIR",
		Short: "Fetch a finished job's output: output.png for a png-grid job, output.bin otherwise; -o - writes it to stdout",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) (err error) {
			ctx := cmd.Context()
			c, err := g.client()
			if err != nil {
				return err
			}
			id, err := resolveJobID(ctx, c, args[0])
			if err != nil {
				return err
			}
			j, err := c.Job(ctx, id)
			if err != nil {
				return err
			}
			if j.OutputCID == "" {
				return fmt.Errorf("job %s has no output yet (state %s)", j.ID, j.State)
			}
			name := "output.bin"
			if j.Output == "png-grid" {
				name = "output.png"
			}
			rc, err := c.Output(ctx, j.ID)
			if err != nil {
				return err
			}
			defer rc.Close()
			var output io.Reader = rc
			if merge != "" {
				if output, err = mergeOutput(merge, rc); err != nil {
					return err
				}
			}
			if dir == "-" {
				if _, err := io.Copy(cmd.OutOrStdout(), output); err != nil {
					return fmt.Errorf("fetching the output of job %s: %w", j.ID, err)
				}
				return nil
			}
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return err
			}
			path := filepath.Join(dir, name)
			// Written under a temporary name: an interrupted fetch leaves no
			// partial output behind.
			tmp, err := os.CreateTemp(dir, "."+name+".*")
			if err != nil {
				return err
			}
			defer os.Remove(tmp.Name())
			n, err := io.Copy(tmp, output)
			if cerr := tmp.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return fmt.Errorf("fetching the output of job %s: %w", j.ID, err)
			}
			if err := os.Rename(tmp.Name(), path); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s (%d bytes)\n", path, n)
			return nil
		},
	}
	cmd.Flags().StringVarP(&dir, "out", "o", ".", "directory to write the output to; - for stdout")
	cmd.Flags().StringVar(&merge, "merge", "", "merge the per-block results of a concat job: wordcount (sums the word counts of the wordcount example into one table)")
	return cmd
}

func newJobCancelCmd(g *globals) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "cancel ID",
		Short: "Cancel a job this node submitted, before work on it has started; its escrow is refunded",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := g.client()
			if err != nil {
				return err
			}
			id, err := resolveJobID(cmd.Context(), c, args[0])
			if err != nil {
				return err
			}
			j, err := c.Cancel(cmd.Context(), id)
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(cmd.OutOrStdout(), j)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "job %s %s\n", j.ID, j.State)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the job as JSON")
	return cmd
}
