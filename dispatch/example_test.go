package dispatch_test

import (
	"fmt"
	"math/big"
	"time"

	"github.com/jobmesh/jobmesh/dispatch"
)

// Several processors ask to own a MicroJob queue; every node computes the
// same winner from the public seed.
func ExampleChooser() {
	job := dispatch.Job{ID: "job-1", Price: big.NewInt(1)}
	requesters := []dispatch.Node{
		{ID: "peerA", Stake: big.NewInt(4e18), QoS: 0.9},
		{ID: "peerB", Stake: big.NewInt(1e18), QoS: 1.0},
		{ID: "peerC", Stake: big.NewInt(9e18), QoS: 0.2},
	}
	w := dispatch.Weights(job, requesters)
	c := dispatch.NewChooser(dispatch.Seed([]byte("job-1"), []byte("macro-0"), []byte{0, 0, 0, 0, 0, 0, 0, 7}))
	i, err := c.Choose(w)
	if err != nil {
		panic(err)
	}
	fmt.Println(requesters[i].ID)
	// Output: peerA
}

// Seed 002's worked example: with 30 s of overhead and 20 s per image, the
// 2-image task at 15 CNX is worth more than the 1-image task at 10 CNX.
func ExampleTaskValue() {
	cfg := dispatch.DefaultConfig()
	cnx := big.NewInt(1e18)
	for _, j := range []dispatch.Job{
		{ID: "one", Price: new(big.Int).Mul(big.NewInt(10), cnx), Units: 1},
		{ID: "two", Price: new(big.Int).Mul(big.NewInt(15), cnx), Units: 2},
	} {
		v, _ := dispatch.TaskValue(cfg, j)
		est, _ := dispatch.EstimatedTime(cfg, j.Units)
		perCNX := new(big.Rat).Quo(v, new(big.Rat).SetInt(cnx))
		fmt.Println(j.ID, est.Round(time.Second), perCNX.FloatString(3), "CNX/s")
	}
	// Output:
	// one 50s 0.200 CNX/s
	// two 1m10s 0.214 CNX/s
}

// A fee of 1 CNX split among three processors by their submission order;
// peerA and peerC tie, and the leftover wei goes to the lower index.
func ExampleSplitFee() {
	cfg := dispatch.DefaultConfig()
	o := dispatch.TaskOutcome{
		TaskID:      "micro-3",
		Assigned:    []string{"peerA", "peerB", "peerC"},
		Commits:     []string{"peerB", "peerA", "peerC"},
		Disclosures: []string{"peerB", "peerC", "peerA"},
	}
	w, _ := dispatch.FeeWeights(cfg, o)
	shares, _ := dispatch.SplitFee(big.NewInt(1e18), w)
	fmt.Println(w, shares)
	// Output: [7 20 7] [205882352941176471 588235294117647059 205882352941176470]
}
