# usage: perbyte.sh COMMIT -> prints commit, user CPU (s) of a 1 MB send and of a 3 GB send (N=4), 3 each
set -u
c=$1; d=/work/wt/bis-$c
[ -d $d ] || git -C /work/main worktree add -q --detach $d $c
port=$((47200 + RANDOM % 500))
rm -rf /tmp/pbroot; mkdir -p /tmp/pbroot
PYTHONPATH=$d python3 -m xfer.cli recv --listen 127.0.0.1:$port --root /tmp/pbroot --no-fsync 2>/dev/null & R=$!
sleep 1.5
small=""; big=""
for i in 1 2 3; do
  /usr/bin/time -o /tmp/pb.t -f "%U+%S" env PYTHONPATH=$d python3 -m xfer.cli send --mem 1000000 127.0.0.1:$port --streams ${N:-4} -q >/dev/null 2>&1; small="$small $(cat /tmp/pb.t)"
  /usr/bin/time -o /tmp/pb.t -f "%U+%S" env PYTHONPATH=$d python3 -m xfer.cli send --mem 3000000000 127.0.0.1:$port --streams ${N:-4} -q >/dev/null 2>&1; big="$big $(cat /tmp/pb.t)"
done
kill $R; wait $R 2>/dev/null
echo "$c small$small big$big"
