// Command jobnode runs a jobmesh node: bootstrap, processor, DApp client or
// the all-in-one demo. Every command takes --repo.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := newRootCmd().ExecuteContext(ctx); err != nil {
		if !errors.Is(err, errSilent) {
			fmt.Fprintln(os.Stderr, "jobnode:", err)
		}
		os.Exit(1)
	}
}
