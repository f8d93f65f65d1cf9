#!/usr/bin/env bash
# scripts/kernel-cc, the kernel build's compiler: ccache in depend mode (as
# scripts/kernel-build.sh runs it, with -Wp,-MMD as kbuild passes it)
# serves a stale object for an assembler source whose .incbin file changed
# but kept its size, as bzImage's piggy.S does; through kernel-cc the
# object holds the new bytes, and a C source still comes from the cache.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$top/tests/lib/tap.sh"

echo "TAP version 13"
export CCACHE_DIR=$tmp/ccache CCACHE_DEPEND=1 CCACHE_BASEDIR=$tmp CCACHE_NOHASHDIR=1
cd "$tmp" || exit 1
# blob.S pulls in payload.bin and names only its size, as piggy.S does
printf '.section .rodata\n.globl payload_len\npayload_len = 8\n.incbin "payload.bin"\n' >blob.S
printf 'int f(void) { return 42; }\n' >c.c
build() {	# CC... : blob.o and c.o from payload $PAYLOAD, the cache's hits in $hits
	printf '%s' "$PAYLOAD" >payload.bin
	rm -f blob.o c.o
	"$@" -Wp,-MMD,blob.o.d -c -o blob.o blob.S && "$@" -Wp,-MMD,c.o.d -c -o c.o c.c
}
holds() { objcopy -O binary -j .rodata "$1" /dev/stdout 2>/dev/null | grep -qF "$2"; }

PAYLOAD=OLDBYTES build ccache gcc && PAYLOAD=NEWBYTES build ccache gcc
holds blob.o OLDBYTES
ok $? "plain ccache gcc (depend mode): the object still holds the old payload of the same size (the hazard)"

rm -rf "$CCACHE_DIR"
PAYLOAD=OLDBYTES build "$top/scripts/kernel-cc" && PAYLOAD=NEWBYTES build "$top/scripts/kernel-cc"
holds blob.o NEWBYTES
ok $? "through scripts/kernel-cc: the object holds the new payload"
hits=$(ccache -s 2>/dev/null | sed -nE 's/.*[Hh]its: +([0-9]+).*/\1/p' | head -n 1)
[ "${hits:-0}" -ge 1 ]
ok $? "and the C source still came from the cache (${hits:-0} hits)"

echo "1..$n"
echo "# tests/host/kernel-cc.t: $((n - failed)) passed, $failed failed"
[ "$failed" -eq 0 ]
