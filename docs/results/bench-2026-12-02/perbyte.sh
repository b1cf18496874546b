# usage: [N=4] perbyte.sh COMMIT -> prints commit, user+sys CPU (s) of 3 sends of 1 MB and of
# 3 GB at N streams, from a worktree of COMMIT, to a receiver of the same engine
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
