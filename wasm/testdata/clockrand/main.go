// Command clockrand prints what a Go program sees of the clock, randomness,
// arguments, environment and files inside the executor's sandbox; the wasm
// tests run it twice and expect identical output.
package main

import (
	crand "crypto/rand"
	"fmt"
	"math/rand/v2"
	"os"
	"time"
)

func main() {
	start := time.Now()
	buf := make([]byte, 16)
	_, _ = crand.Read(buf)
	_, statErr := os.Stat("/etc/passwd")
	host, _ := os.Hostname()
	fmt.Printf("now=%s\n", start.UTC().Format(time.RFC3339Nano))
	fmt.Printf("elapsed=%v\n", time.Since(start))
	fmt.Printf("crypto=%x\n", buf)
	fmt.Printf("math=%d\n", rand.Uint64())
	fmt.Printf("args=%q env=%q\n", os.Args, os.Environ())
	fmt.Printf("file=%v host=%q\n", statErr != nil, host)
	m := map[int]int{}
	for i := range 20 {
		m[i] = i
	}
	order := ""
	for k := range m {
		order += fmt.Sprint(k, ",")
	}
	fmt.Printf("maporder=%s\n", order)
}
