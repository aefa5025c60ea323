# timeone.bash, sourced by bench scripts: time_one runs one command once under hyperfine (output
# to /dev/null) and prints its wall time and its CPU time (user+sys), in seconds to the
# microsecond, where GNU time rounds CPU time to 10 ms. A failing command's stderr is shown and
# the script stops. hyperfine (Debian) is installed by the Makefile's bench targets.

# time_one CMD [ARG...]: prints "WALL CPU".
time_one() {
  local csv err
  csv=$(mktemp) err=$(mktemp)
  if ! hyperfine -N --runs 1 --style none --export-csv "$csv" "$(printf '%q ' "$@")" >/dev/null 2>"$err"; then
    cat "$err" >&2
    rm -f "$csv" "$err"
    echo "failed: $*" >&2
    exit 1
  fi
  # Columns by their header (command,mean,stddev,median,user,system,...): one run, so mean is
  # its wall time.
  awk -F, 'NR == 1 {for (i = 1; i <= NF; i++) col[$i] = i; next}
    NR == 2 {printf "%.6f %.6f\n", $col["mean"], $col["user"] + $col["system"]}' "$csv"
  rm -f "$csv" "$err"
}

# median: the median of the numbers on standard input, one a line.
median() {
  sort -g | awk '{v[NR] = $1} END {if (NR == 0) exit 1; print NR % 2 ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2}'
}
