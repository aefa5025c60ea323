# coresgiven.bash, sourced by bench scripts: cores_given prints how many cores two busy processes
# get, against one: the work two processes spinning for 0.5 s do over the work one does, the
# median of 3 tries. 2.0 when the machine gives two whole cores; a virtual machine's two cores may
# be one for a while, and the -j 2 figures then mean little. python3 is installed by the Makefile
# (with pandas).

# cores_given: prints the cores two busy processes got, e.g. "1.97".
cores_given() {
  local spin='import time
n = 0
end = time.perf_counter() + 0.5
while time.perf_counter() < end:
    n += 1
print(n)'
  local one two
  local -a ratios=()
  for _ in 1 2 3; do
    one=$(python3 -c "$spin")
    two=$( { python3 -c "$spin" & python3 -c "$spin" & wait; } | awk '{s += $1} END {print s}')
    ratios+=("$(awk -v a="$one" -v b="$two" 'BEGIN {printf "%.2f", b / a}')")
  done
  printf '%s\n' "${ratios[@]}" | sort -g | sed -n 2p
}
