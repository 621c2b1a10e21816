// Command jobnode runs a jobmesh node: bootstrap, processor, DApp client or
// the all-in-one demo. Every command takes --repo.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := runMain(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// runMain runs jobnode with args and returns its exit code (exit.go),
// having said the error, if any, on stderr.
func runMain(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	root := newRootCmd()
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	if err != nil && !errors.Is(err, errSilent) {
		fmt.Fprintln(stderr, "jobnode:", err)
	}
	return exitCode(err)
}
