⍝ T30: the power operator iterates a function; ⍣0 is the identity.
⎕ ← {⍵×2}⍣0 ⊢ 1 2
{⍵×2}⍣3 ⊢ 1 2
⍝ ==
⍝ output { [8i64, 16i64] }
