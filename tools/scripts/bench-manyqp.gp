# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#
# bench-manyqp.gp: make bench's many-QP plot (gnuplot 5.4, pngcairo).
#
#   gnuplot -e "tsv='build/bench/manyqp.tsv'; outdir='build/bench'" tools/scripts/bench-manyqp.gp
#
# Reads bench-manyqp.sh's TSV, one point a line:
#   series(e1, e2: engines per end) <TAB> QPs <TAB> Mpps (64 B) <TAB> Gb/s (64 KiB)
#   <TAB> CPU ns per frame (64 B run) <TAB> the same (64 KiB run)
# ("-" where a run failed). Draws outdir/manyqp.png: three panels against the
# QP count (log scale): message rate, bandwidth, per-frame CPU cost.

if (!exists("tsv")) tsv = "build/bench/manyqp.tsv"
if (!exists("outdir")) outdir = "build/bench"
if (!exists("subtitle")) subtitle = system("printf '%s, %s cores' \"$(uname -r)\" \"$(nproc)\"")

series = system(sprintf("cut -f1 '%s' | awk 'NF && !seen[$0]++' | tr '\\n' ' '", tsv))
if (words(series) == 0) {
	print sprintf("bench-manyqp.gp: no data in %s", tsv)
	exit status 1
}

set datafile separator "\t"
set datafile missing "-"
set terminal pngcairo size 1500,520 enhanced font "DejaVu Sans,11" linewidth 1.5
set output outdir."/manyqp.png"
set logscale x 2
set xtics (1, 4, 16, 64, 256, 1024, 4096)
set xrange [0.7:6000]
set grid xtics ytics lc rgb "#b0b0b0" dt 3
set key top right box opaque
set xlabel "QPs"
set yrange [0:*]
colour(i) = word("#1f77b4 #d62728 #2ca02c #ff7f0e", (i - 1) % 4 + 1)
pick(col, s) = strcol(1) eq s ? column(col) : NaN
label(s) = sprintf("%s engine%s per end", s[2:*], s[2:*] eq "1" ? "" : "s")

set multiplot layout 1,3 title sprintf("roxe RC WRITE with many QPs, veth between two namespaces\n{/*0.8 %s}", subtitle)
set title "message rate, 64 B"
set ylabel "millions of messages per second"
plot for [i = 1:words(series)] tsv using 2:(pick(3, word(series, i))) \
	with linespoints pt (i + 5) ps 1.2 lc rgb colour(i) title label(word(series, i))
set title "bandwidth, 64 KiB"
set ylabel "Gb/s of payload"
plot for [i = 1:words(series)] tsv using 2:(pick(4, word(series, i))) \
	with linespoints pt (i + 5) ps 1.2 lc rgb colour(i) title label(word(series, i))
set title "CPU per frame (both ends), 64 B run"
set ylabel "ns of CPU per frame"
plot for [i = 1:words(series)] tsv using 2:(pick(5, word(series, i))) \
	with linespoints pt (i + 5) ps 1.2 lc rgb colour(i) title label(word(series, i))
unset multiplot
unset output
