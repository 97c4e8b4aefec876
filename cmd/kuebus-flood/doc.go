// Command kuebus-flood floods a running `kuebus dev` (or core of `kuebus node`)
// the ways a misbehaving client could, and reports the process's peak RSS
// and whether core kept answering meanwhile. scripts/flood.sh builds and
// runs it; docs/reliability.md has its figures.
//
//	kuebus-flood -nats URL -pid PID -mode leases [-leases 60000] [-wait 20s]
//	kuebus-flood -nats URL -pid PID -mode subscribers [-subscribers 3] -- CMD ARGS...
//
// leases sends that many waiting lease requests (of a type nobody
// creates) at once and waits for every answer. subscribers opens raw TCP
// connections that subscribe to job.> and never read a byte, then runs
// CMD (kuebus bench creating and running jobs) until it exits. In both,
// the RSS of PID is sampled from /proc every 100 ms, and core's stats
// asked for every 200 ms (each call may take 2 s), until -after past the
// flood. It exits 1 if a stats call failed.
//
// Files:
//
//	doc.go   this comment
//	main.go  the flags, the two floods, the RSS sampler and the stats probe
package main
