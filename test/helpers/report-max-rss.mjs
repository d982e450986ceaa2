// Preloaded into a child process (NODE_OPTIONS=--import=<this file>): at exit, its peak resident
// set size on stderr as `max-rss-kb=<n>` (process.resourceUsage().maxRSS, in KiB; the process
// itself, not the children it waited for).
process.on('exit', () => process.stderr.write(`\nmax-rss-kb=${process.resourceUsage().maxRSS}\n`))
