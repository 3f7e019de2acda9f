# FPGA synthesis (docs/fpga.md): `stepgen synth` on the small test architecture (W = 16,
# 512-word memory unit, 16-bit addresses). The address generator and the memory unit go
# through gate-level synth_xilinx for xc7 and must count LUTs and flip-flops; the compute
# unit does not synthesize in CI time yet (docs/fpga.md, "What synthesizes today").
# Bad input: an unknown target is an argument error; the two address generators (about
# 4,300 SB_LUT4 each on iCE40) overflow an UP5K (5,280 LUTs): exit 3 naming the part.
add_test(NAME fpga_synth_small_xc7
         COMMAND bash -c "set -e
           $<TARGET_FILE:stepgen> synth --arch ${STEPGEN_ROOT}/tests/data/arch_small.yaml --target xc7 --only ag,mu \
             -o fpga_small --timeout 600 --csv fpga_small/fpga.csv > fpga_small.log
           cat fpga_small.log
           awk -F, '\$3 == \"ag\" || \$3 == \"mu\" { n++; if (\$16 != \"ok\" || \$4 < 100 || \$5 < 100) bad = 1 }
                    END { exit (n == 2 && !bad) ? 0 : 1 }' fpga_small/fpga.csv
           # the partial fabric row counts two address generators and one memory unit
           awk -F, '\$3 == \"ag\" { ag = \$4 } \$3 == \"mu\" { mu = \$4 } \$3 == \"fabric\" { f = \$4; st = \$16 }
                    END { exit (f == 2 * ag + mu && st == \"partial\") ? 0 : 1 }' fpga_small/fpga.csv
           test -f fpga_small/synth.json"
         WORKING_DIRECTORY ${CMAKE_BINARY_DIR})
add_test(NAME fpga_synth_bad_input
         COMMAND bash -c "set -u
           if $<TARGET_FILE:stepgen> synth --arch ${STEPGEN_ROOT}/tests/data/arch_small.yaml --target xc9 -o fpga_bad 2> err1.txt; then exit 1; fi
           grep -q 'xc9' err1.txt
           $<TARGET_FILE:stepgen> synth --arch ${STEPGEN_ROOT}/tests/data/arch_small.yaml --target ice40 --part up5k --only ag \
             -o fpga_bad --timeout 600 > out2.txt 2> err2.txt
           rc=$?; cat err2.txt; [ $rc -eq 3 ] && grep -q 'does not fit part up5k' err2.txt"
         WORKING_DIRECTORY ${CMAKE_BINARY_DIR})
set_tests_properties(fpga_synth_small_xc7 fpga_synth_bad_input PROPERTIES TIMEOUT 900 LABELS "fpga;slow")
