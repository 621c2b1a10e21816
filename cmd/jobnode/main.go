// Command jobnode runs a jobmesh node: bootstrap, processor, DApp client or
// the all-in-one demo.
package main

func main() {}
