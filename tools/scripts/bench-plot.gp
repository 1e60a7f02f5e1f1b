# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
#
# bench-plot.gp: make bench's throughput plots (gnuplot 5.4, pngcairo from
# gnuplot-nox).
#
#   gnuplot -e "tsv='build/bench/sweep.tsv'; outdir='build/bench'" tools/scripts/bench-plot.gp
#
# Reads a TSV of points, one a line:  series <TAB> bytes <TAB> gbps <TAB> mpps
# (lines starting with # are comments), e.g. series roxe-write-afxdp,
# roxe-write-udp, raw-afxdp, raw-udp, tcp; a series name has no spaces.
# Draws outdir/bandwidth.png, payload Gb/s against message size (log2 x),
# and outdir/msgrate.png, millions of messages per second. Series keep the
# order of their first line; repeated points of one series and size are
# averaged (several runs of a noisy figure).

#
# With losstsv set instead (bench-loss.sh's summary: op <TAB> loss % <TAB>
# median Gb/s <TAB> min <TAB> max <TAB> frames per MiB), draws
# outdir/loss.png: goodput as a fraction of the clean run against loss,
# with the goals (0.8 at 1 %, 0.5 at 3 %) marked.
#   gnuplot -e "losstsv='build/bench/loss-summary.tsv'; outdir='build/bench'" tools/scripts/bench-plot.gp

if (!exists("outdir")) outdir = "build/bench"
if (!exists("subtitle")) subtitle = system("printf '%s, %s cores' \"$(uname -r)\" \"$(nproc)\"")
if (exists("losstsv")) {
	ops = system(sprintf("cut -f1 '%s' | awk 'NF && !seen[$0]++' | tr '\\n' ' '", losstsv))
	set datafile separator "\t"
	set terminal pngcairo size 1000,620 enhanced font "DejaVu Sans,11" linewidth 1.5
	set output outdir."/loss.png"
	set title sprintf("roxe RC 64 KiB goodput under random loss (faultwire, each way)\n{/*0.8 %s}", subtitle)
	set xlabel "frames dropped (%)"
	set ylabel "goodput / goodput without loss"
	set xrange [-0.1:3.2]
	set yrange [0:1.1]
	set grid xtics ytics lc rgb "#b0b0b0" dt 3
	set key bottom left box opaque
	set object 1 circle at 1, 0.8 size 0.04 fc rgb "#606060" fs empty
	set object 2 circle at 3, 0.5 size 0.04 fc rgb "#606060" fs empty
	set label 1 "goal" at 1.06, 0.8 tc rgb "#606060"
	set label 2 "goal" at 3.06, 0.5 tc rgb "#606060"
	clean(o) = real(system(sprintf("awk -F '\t' '$1 == \"%s\" && $2 == 0 { print $3 }' '%s'", o, losstsv)))
	plot for [i = 1:words(ops)] losstsv using 2:(strcol(1) eq word(ops, i) ? $3 / clean(word(ops, i)) : NaN) \
		with linespoints pt (i + 5) ps 1.2 title "RC ".word(ops, i)
	unset output
	exit
}
#
# With cctsv set instead (bench-cc.sh's: mode <TAB> seconds <TAB> qpn <TAB>
# Mbit/s <TAB> DCQCN rate <TAB> CNPs), draws outdir/cc.png: each sender's
# rate against time, one panel per mode (congestion control on, off), the
# DCQCN rate dashed where it limits the sender.
#   gnuplot -e "cctsv='build/bench/cc.tsv'; outdir='build/bench'" tools/scripts/bench-plot.gp
if (exists("cctsv")) {
	modes = system(sprintf("grep -v '^#' '%s' | cut -f1 | awk 'NF && !seen[$0]++' | tr '\\n' ' '", cctsv))
	qps = system(sprintf("grep -v '^#' '%s' | cut -f3 | sort -n | uniq | tr '\\n' ' '", cctsv))
	set datafile separator "\t"
	set datafile commentschars "#"
	set terminal pngcairo size 1000, 360 * words(modes) + 60 enhanced font "DejaVu Sans,11" linewidth 1.5
	set output outdir."/cc.png"
	set multiplot layout words(modes), 1 title sprintf("two RC senders through one congested port (faultwire --rate)\n{/*0.8 %s}", subtitle)
	set grid xtics ytics lc rgb "#b0b0b0" dt 3
	set key top right box opaque
	set xlabel "seconds"
	set ylabel "Mbit/s"
	set yrange [0:*]
	colour(i) = word("#1f77b4 #d62728 #2ca02c #ff7f0e", (i - 1) % 4 + 1)
	# one series' rows alone: NaN rows between them would break its line
	rows(m, q) = sprintf("< awk -F '\t' '$1 == \"%s\" && $3 == %s' '%s'", m, q, cctsv)
	do for [m = 1:words(modes)] {
		set title "congestion control ".word(modes, m)
		plot for [i = 1:words(qps)] rows(word(modes, m), word(qps, i)) using 2:4 \
			with lines lc rgb colour(i) title "QP ".word(qps, i)." sent", \
		     for [i = 1:words(qps)] rows(word(modes, m), word(qps, i)) using 2:($5 > 0 ? $5 : NaN) \
			with lines dt 2 lc rgb colour(i) title "QP ".word(qps, i)." DCQCN rate"
	}
	unset multiplot
	unset output
	exit
}
if (!exists("tsv")) tsv = "build/bench/sweep.tsv"

# Series names in order of appearance.
series = system(sprintf("grep -v '^#' '%s' | cut -f1 | awk 'NF && !seen[$0]++' | tr '\\n' ' '", tsv))
if (words(series) == 0) {
	print sprintf("bench-plot.gp: no data in %s", tsv)
	exit status 1
}

set datafile separator "\t"
set datafile commentschars "#"
set terminal pngcairo size 1000,620 enhanced font "DejaVu Sans,11" linewidth 1.5
set logscale x 2
set format x "%.0f"
set xtics (64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072)
set grid xtics ytics lc rgb "#b0b0b0" dt 3
set key top left box opaque
set xlabel "message size (bytes of payload)"
set yrange [0:*]
set offsets graph 0.02, graph 0.02, graph 0.05, 0

# Raw paths dashed (the limits), roxe solid, TCP grey.
dash(s) = s[1:3] eq "raw" ? 2 : 1
colour(i) = word("#1f77b4 #d62728 #2ca02c #ff7f0e #9467bd #8c564b #e377c2 #17becf", (i - 1) % 8 + 1)
pick(col, s) = strcol(1) eq s ? column(col) : NaN

set output outdir."/bandwidth.png"
set title sprintf("roxe throughput vs message size, veth between two namespaces\n{/*0.8 %s}", subtitle)
set ylabel "throughput (Gb/s of payload)"
plot for [i = 1:words(series)] tsv using 2:(pick(3, word(series, i))) smooth unique \
	with linespoints dt dash(word(series, i)) pt (i + 5) ps 1.2 \
	lc rgb (word(series, i) eq "tcp" ? "#606060" : colour(i)) title word(series, i)

set output outdir."/msgrate.png"
set title sprintf("roxe message rate vs message size, veth between two namespaces\n{/*0.8 %s}", subtitle)
set ylabel "message rate (millions per second)"
set key top right
plot for [i = 1:words(series)] tsv using 2:(pick(4, word(series, i))) smooth unique \
	with linespoints dt dash(word(series, i)) pt (i + 5) ps 1.2 \
	lc rgb (word(series, i) eq "tcp" ? "#606060" : colour(i)) title word(series, i)
unset output
