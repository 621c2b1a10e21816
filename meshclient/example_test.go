package meshclient_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"

	"github.com/jobmesh/jobmesh/apiv1"
	"github.com/jobmesh/jobmesh/meshclient"
)

// A DApp uploads its code and data to its node, submits the job, follows
// it to its end and saves the picture.
func Example() {
	ctx := context.Background()
	home, _ := os.UserHomeDir()
	c, err := meshclient.ForRepo(filepath.Join(home, ".jobmesh"))
	if err != nil {
		log.Fatal(err)
	}
	upload := func(path string) apiv1.Content {
		f, err := os.Open(path)
		if err != nil {
			log.Fatal(err)
		}
		defer f.Close()
		content, err := c.Upload(ctx, f)
		if err != nil {
			log.Fatal(err)
		}
		return content
	}
	code, data := upload("mandelbrot.wasm"), upload("tiles.bin")
	job, err := c.Submit(ctx, apiv1.SubmitRequest{
		Code:     apiv1.Source{URI: code.URI, SHA256: code.SHA256},
		Data:     apiv1.Source{URI: data.URI, SHA256: data.SHA256},
		Slicing:  apiv1.Slicing{BlockSize: 32, MicroJobs: 4, BlocksPerMicro: 2},
		PriceWei: "1000000000000000",
		Output:   "png-grid",
		Columns:  8,
	})
	if err != nil {
		log.Fatal(err) // a *meshclient.Error carries the API's status and message
	}
	job, err = c.Wait(ctx, job.ID, func(j apiv1.Job) {
		fmt.Printf("%s: %d/%d MicroJobs committed\n", j.State, j.Committed, j.MicroJobs)
	})
	if err != nil {
		log.Fatal(err)
	}
	out, err := c.Output(ctx, job.ID)
	if err != nil {
		log.Fatal(err)
	}
	defer out.Close()
	f, err := os.Create("output.png")
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	if _, err := io.Copy(f, out); err != nil {
		log.Fatal(err)
	}
	fmt.Println("settled:", job.SettlementTx, job.Payouts)
}
