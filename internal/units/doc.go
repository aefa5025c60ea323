// Package units is how every ibscope command and package reads and writes
// durations, bit rates and byte sizes as text: one duration parser for
// every flag ("2.5us", "1m30s", a bare number of ns), and formatters that
// pick the unit that keeps a value short ("2.074us", "4.88 Gb/s",
// "1.50 MiB"). Values are carried as integers in the smallest unit (ns,
// bytes) or as floats in bits per second; the names say which.
package units
