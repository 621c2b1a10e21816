/*
 * upper: a jobmesh job in C. It reads one block on stdin and writes it on
 * stdout with ASCII letters upper-cased (tr a-z A-Z). Build it for
 * wasm32-wasi with clang and wasi-libc (Debian: apt install clang lld
 * wasi-libc libclang-rt-14-dev-wasm32):
 *
 *   clang --target=wasm32-wasi -O2 -s -o upper.wasm examples/c/upper.c
 *
 * (Debian's clang finds wasi-libc by itself; elsewhere add
 * --sysroot=PATH-TO-WASI-SYSROOT.)
 *
 * The output depends on the block alone: no clock, no environment, no
 * files, no randomness; every processor must write the same bytes.
 */
#include <stdio.h>

int main(void) {
	char buf[65536];
	size_t n;
	while ((n = fread(buf, 1, sizeof buf, stdin)) > 0) {
		for (size_t i = 0; i < n; i++) {
			if (buf[i] >= 'a' && buf[i] <= 'z') {
				buf[i] -= 'a' - 'A';
			}
		}
		if (fwrite(buf, 1, n, stdout) != n) {
			fputs("upper: write failed\n", stderr);
			return 1;
		}
	}
	if (ferror(stdin)) {
		fputs("upper: read failed\n", stderr);
		return 1;
	}
	return 0;
}
