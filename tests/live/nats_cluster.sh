# shellcheck shell=bash
# A three-node NATS JetStream cluster on loopback, for the shard tests and bench/bus.sh
# (docs/scale.md). Sourced; defines:
#   free_ports N        prints N TCP ports the kernel says are free on 127.0.0.1
#   nats_cluster DIR NAME
#                       starts three nats-servers (nodes n0..n2, cluster NAME) on free client
#                       and cluster ports, JetStream stores in DIR/nats0..2, logs in
#                       DIR/nats0..2.log; sets nats_pids (their pids, node by node) and
#                       nats_urls (their client URLs, comma-separated)
free_ports() {
  python3 -c 'import socket, sys
s = [socket.socket() for _ in range(int(sys.argv[1]))]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])' "$1"
}

nats_cluster() {
  local dir=$1 name=$2 i j routes
  local -a ports
  read -r -a ports <<<"$(free_ports 6)"  # three client ports, then three cluster ports
  nats_pids=()
  nats_urls=
  for i in 0 1 2; do
    routes=
    for j in 0 1 2; do
      [ "$j" = "$i" ] || routes+=${routes:+,}nats://127.0.0.1:${ports[j + 3]}
    done
    nats-server -a 127.0.0.1 -p "${ports[i]}" -js -sd "$dir/nats$i" -n "n$i" \
      --cluster_name "$name" \
      --cluster "nats://127.0.0.1:${ports[i + 3]}" --routes "$routes" >"$dir/nats$i.log" 2>&1 &
    nats_pids+=($!)
    nats_urls+=${nats_urls:+,}nats://127.0.0.1:${ports[i]}
  done
}
