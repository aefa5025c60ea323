# timesbyj.awk, the start of the awk program of the bench scripts that time commands with GNU time
# -f "J %e %U %S %M" (J: the -j of the run): it gathers each J's wall and CPU (user+sys) seconds
# and largest peak RSS (KiB) into wall[J], cpu[J] (space-separated) and rss[J]; the script's END
# block prints them through median.
function median(s,   v, n, i, k, t) {
  n = split(s, v, " ")
  for (i = 2; i <= n; i++) { t = v[i]; for (k = i - 1; k >= 1 && v[k] + 0 > t + 0; k--) v[k + 1] = v[k]; v[k + 1] = t }
  return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
}
{ wall[$1] = wall[$1] " " $2; cpu[$1] = cpu[$1] " " ($3 + $4); if ($5 > rss[$1]) rss[$1] = $5 }
