package main

import (
	"context"
	"fmt"
	"io"
	"math/big"
	"os"
	"strings"
	"time"

	"github.com/jobmesh/jobmesh/api"
	"github.com/jobmesh/jobmesh/apiv1"
	"github.com/jobmesh/jobmesh/dapp"
	"github.com/jobmesh/jobmesh/jobs"
	"github.com/jobmesh/jobmesh/meshclient"
)

// defaultMaxMicroJobs is the most MicroJobs job submit makes unless
// --max-microjobs raises it: more, from a small --block-size on modest
// data, is far more likely a slip than a plan.
const defaultMaxMicroJobs = 256

// localPlan is the plan of a submission whose --data is a local file,
// computed here before anything is uploaded; ok is false for data named
// by URI, which only the node can size (remotePlan).
func localPlan(req apiv1.SubmitRequest, data string) (apiv1.Plan, bool, error) {
	if isURI(data) {
		return apiv1.Plan{}, false, nil
	}
	st, err := os.Stat(data)
	if err != nil {
		return apiv1.Plan{}, false, usageError(fmt.Errorf("--data: %w", err))
	}
	if st.Size() == 0 {
		return apiv1.Plan{}, false, flagError("data", "%s is empty", data)
	}
	return planOf(req, uint64(st.Size())), true, nil
}

// remotePlan asks the node for the plan of req, whose sources are URIs:
// the node reads the data to size it, and checks the module.
func remotePlan(ctx context.Context, c *meshclient.Client, req apiv1.SubmitRequest) (apiv1.Plan, error) {
	p, err := c.Plan(ctx, req)
	if err != nil {
		return apiv1.Plan{}, fmt.Errorf("planning the job: %w", err)
	}
	return p, nil
}

func planOf(req apiv1.SubmitRequest, size uint64) apiv1.Plan {
	price, _ := new(big.Int).SetString(req.PriceWei, 10)
	sl := req.Slicing
	p := api.PlanOf(size, jobs.Slicing{BlockSize: sl.BlockSize, MicroJobs: sl.MicroJobs, BlocksPerMicro: sl.BlocksPerMicro,
		VerifierBlocks: sl.VerifierBlocks}, req.Requirements.Replicas, price)
	p.Limits = req.Limits
	return p
}

// checkPlan refuses a plan of more than max MicroJobs (0: no limit), by
// the flags that made it.
func checkPlan(p apiv1.Plan, max uint64) error {
	if max == 0 || p.MicroJobs <= max {
		return nil
	}
	return flagError("max-microjobs", "the plan has %d MicroJobs (%d blocks of %d bytes), over the limit of %d: "+
		"raise --block-size or --blocks-per-micro, or pass --max-microjobs %d if that many is meant",
		p.MicroJobs, p.Blocks, p.BlockSize, max, p.MicroJobs)
}

// printPlan writes the plan, and a warning when one run earns less than
// the price floor, what a processor pays to take its pay out.
func printPlan(w io.Writer, p apiv1.Plan) {
	fmt.Fprintf(w, "plan: %d bytes in %d blocks of %d bytes; %d MacroJobs; %d MicroJobs (%d regular, %d verifiers), "+
		"each run by %d processor%s: %d runs\n", p.DataSize, p.Blocks, p.BlockSize, p.MacroJobs, p.MicroJobs,
		p.RegularMicroJobs, p.VerifierMicroJobs, p.Replicas, plural(uint64(p.Replicas)), p.Runs)
	fmt.Fprintf(w, "price: %s wei in escrow, about %s wei per MicroJob run\n", p.PriceWei, p.PerRunWei)
	if l := p.Limits; l != (apiv1.Limits{}) {
		fmt.Fprintf(w, "per-block limits: %s\n", limitsText(l))
	}
	if per, ok := new(big.Int).SetString(p.PerRunWei, 10); ok && per.Cmp(dapp.MinPriceWei()) < 0 {
		fmt.Fprintf(w, "warning: a run earns less than the %s wei a processor pays to take its pay out; "+
			"processors may leave the job alone (raise --price or --block-size)\n", dapp.MinPriceWei())
	}
}

func plural(n uint64) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func isURI(arg string) bool { return strings.Contains(arg, "://") }

// showPlan prints a dry run's plan: JSON, or the summary.
func showPlan(w io.Writer, p apiv1.Plan, asJSON bool) error {
	if asJSON {
		return printJSON(w, p)
	}
	printPlan(w, p)
	return nil
}

// limitsText is the per-block limits a job asks for, "processor's" where
// it asks for none.
func limitsText(l apiv1.Limits) string {
	part := func(v uint32, unit string) string {
		if v == 0 {
			return "the processor's"
		}
		return fmt.Sprintf("%d%s", v, unit)
	}
	return fmt.Sprintf("time %s, memory %s, output %s", part(l.BlockTimeoutS, "s"), part(l.MemoryMiB, " MiB"), part(l.OutputMiB, " MiB"))
}

// setLimits sets req's per-block limits from --block-timeout,
// --block-memory and --block-output (MiB), each checked by its name.
func setLimits(req *apiv1.SubmitRequest, timeout time.Duration, memory, output uint32) error {
	switch {
	case timeout < 0 || timeout > jobs.MaxBlockTimeoutS*time.Second || timeout%time.Second != 0:
		return flagError("block-timeout", "%s: want whole seconds up to %s", timeout, jobs.MaxBlockTimeoutS*time.Second)
	case memory > jobs.MaxBlockMemoryMiB:
		return flagError("block-memory", "%d MiB is over %d MiB", memory, jobs.MaxBlockMemoryMiB)
	case output > jobs.MaxBlockOutputMiB:
		return flagError("block-output", "%d MiB is over %d MiB", output, jobs.MaxBlockOutputMiB)
	}
	req.Limits = apiv1.Limits{BlockTimeoutS: uint32(timeout / time.Second), MemoryMiB: memory, OutputMiB: output}
	return nil
}
