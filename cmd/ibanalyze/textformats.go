package main

// textFormatsHelp is the paragraph of export's and correlate's help on the
// text tables, which pandas reads without pyarrow (Debian 12's pandas 1.5).
const textFormatsHelp = `CSV and JSON Lines hold the same columns for pandas
without pyarrow; times are integers, ns since the epoch (UTC). The CSV's
first line is "# " and a JSON object of each column's pandas dtype:
  dtype = json.loads(open("t.csv").readline()[1:])
  df = pd.read_csv("t.csv", skiprows=1, dtype=dtype)
  df = pd.read_json("t.jsonl", lines=True)    # nulls are absent keys
  df["ts"] = pd.to_datetime(df.ts_ns)
`
