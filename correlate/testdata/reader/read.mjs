// Independent reader for the files ibanalyze export and correlate write.
// Parquet files and Hive-partitioned Parquet datasets are read with DuckDB,
// Arrow IPC files with Arrow JS (zstd buffers decompressed by fzstd): neither
// shares code with the Go writers.
//
//   node read.mjs parquet FILE     one Parquet file
//   node read.mjs dataset DIR      every *.parquet under DIR, hive_partitioning on
//   node read.mjs arrow FILE       one Arrow IPC file
//   node read.mjs sql FILE 'SQL'   run SQL over the Parquet FILE as table t
//   node read.mjs batch            read [[kind, path, sql?], ...] as JSON on
//                                  stdin, print a JSON array of results
//                                  (one node and DuckDB start for many files)
//
// Output is one JSON document: {"schema": [{"name", "type", "metadata"?}], "metadata":
// {...}, "parquet_types": {name: "physical logical"}, "created_by" (Parquet
// footer), "rows": [{...}]}. Null values are left out of rows; every other
// value is written as a string (booleans as "true"/"false", integers in full,
// timestamps as integer ns since the epoch) so no precision is lost to JSON
// numbers.
import { DuckDBInstance } from '@duckdb/node-api';
import * as arrow from 'apache-arrow';
import { decompress } from 'fzstd';
import { readFileSync } from 'node:fs';

function text(v) {
  if (typeof v === 'boolean' || typeof v === 'bigint' || typeof v === 'number') return String(v);
  if (typeof v === 'string') return v;
  // DuckDB's DATE, DECIMAL, ... values print themselves as SQL would.
  if (v.toString !== Object.prototype.toString) return v.toString();
  return JSON.stringify(v);
}

let con;

async function duck(kind, path, sql) {
  if (!con) {
    // No extension downloads: the reader must work offline, with what is built in.
    const db = await DuckDBInstance.create(':memory:', { autoinstall_known_extensions: 'false' });
    con = await db.connect();
  }
  const esc = path.replaceAll("'", "''");
  const src = kind === 'dataset'
    ? `read_parquet('${esc}/**/*.parquet', hive_partitioning = true)`
    : `read_parquet('${esc}')`;
  await con.run(`CREATE OR REPLACE VIEW t AS SELECT * FROM ${src}`);
  const desc = (await con.runAndReadAll('DESCRIBE t')).getRowObjects();
  const schema = desc.map((d) => ({ name: d.column_name, type: d.column_type }));
  // Timestamps come back as integer ns since the epoch, exactly.
  const cols = schema.map((c) => c.type.startsWith('TIMESTAMP')
    ? `epoch_ns("${c.name}") AS "${c.name}"` : `"${c.name}"`);
  const q = sql ?? `SELECT ${cols.join(', ')} FROM t`;
  const res = (await con.runAndReadAll(q)).getRowObjects();
  const rows = res.map((r) => {
    const o = {};
    for (const [k, v] of Object.entries(r)) if (v !== null && v !== undefined) o[k] = text(v);
    return o;
  });
  const metadata = {};
  const parquetTypes = {};
  let createdBy;
  if (kind === 'parquet') {
    // What the file stores (INT64 with unit NANOS, isAdjustedToUTC) and
    // its footer's key-value metadata and created_by.
    const ps = (await con.runAndReadAll(`SELECT name, type, logical_type FROM parquet_schema('${esc}')`)).getRowObjects();
    for (const { name, type, logical_type } of ps) parquetTypes[name] = `${type} ${logical_type ?? ''}`.trim();
    const kv = (await con.runAndReadAll(`SELECT decode(key) AS k, decode(value) AS v FROM parquet_kv_metadata('${esc}')`)).getRowObjects();
    for (const { k, v } of kv) if (!k.startsWith('ARROW:')) metadata[k] = v;
    createdBy = (await con.runAndReadAll(`SELECT created_by FROM parquet_file_metadata('${esc}')`)).getRowObjects()[0].created_by;
  }
  return { schema, metadata, parquet_types: parquetTypes, created_by: createdBy, rows };
}

function arrowFile(path) {
  // Arrow JS views each decompressed buffer in place, so it must start on an
  // 8-byte boundary; fzstd may return a view into a larger buffer.
  arrow.compressionRegistry.set(arrow.CompressionType.ZSTD, {
    decode: (b) => { const d = decompress(b); return d.byteOffset % 8 ? d.slice() : d; },
  });
  // A copy starts at byte 0 of its own ArrayBuffer: Node may hand back a
  // Buffer at any offset of a shared pool, and Arrow JS views buffers stored
  // uncompressed (arrow-go does so when zstd would not shrink them) in place,
  // which needs 8-byte alignment.
  const table = arrow.tableFromIPC(new Uint8Array(readFileSync(path)));
  const schema = table.schema.fields.map((f) => ({
    name: f.name, type: String(f.type), metadata: Object.fromEntries(f.metadata),
  }));
  const metadata = Object.fromEntries(table.schema.metadata);
  const rows = [];
  for (let i = 0; i < table.numRows; i++) rows.push({});
  table.schema.fields.forEach((f, j) => {
    const col = table.getChildAt(j);
    const ts = arrow.DataType.isTimestamp(f.type);
    let i = 0;
    for (const chunk of col.data) {
      for (let k = 0; k < chunk.length; k++, i++) {
        if (!chunk.getValid(k)) continue;
        // Timestamps are read from the raw int64 buffer: the accessor
        // converts to milliseconds.
        rows[i][f.name] = ts ? String(chunk.values[chunk.offset + k]) : text(col.get(i));
      }
    }
  });
  return { schema, metadata, rows };
}

const read = (kind, path, sql) => (kind === 'arrow' ? arrowFile(path) : duck(kind, path, sql));
const [kind, path, sql] = process.argv.slice(2);
let out;
if (kind === 'batch') {
  out = [];
  for (const [k, p, q] of JSON.parse(readFileSync(0, 'utf8'))) out.push(await read(k, p, q));
} else {
  out = await read(kind, path, sql);
}
// Exit as soon as the output is flushed: DuckDB's background threads would
// otherwise hold the process for seconds.
process.stdout.write(JSON.stringify(out), () => process.exit(0));
