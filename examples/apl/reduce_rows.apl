⍝ T28: reduce works on the last axis (rank 2 to 1).
+/ 2 3⍴⍳6
⍝ ==
⍝ output { [6i64, 15i64] }
