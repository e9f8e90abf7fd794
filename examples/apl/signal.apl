⍝ Signal (thesis Ex. 3.1, Fig 3.1): a clamped, scaled difference signal.
diff ← {1↓⍵-¯1⌽⍵}
signal ← {¯50⌈50⌊50×(diff 0,⍵)÷0.01+⍵}
+/ signal 9 8 6 8 7 4 4 3 2 2 1 2 4 5 6
⍝ ==
⍝ output { -27.870466000131344f64 }
