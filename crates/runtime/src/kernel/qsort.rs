//! The quicksort of the `qsort` kernel (our own, so the measured work is exactly what the
//! model describes: average `O(x log x)` comparisons, no adaptive tricks of the standard
//! library's pattern-defeating sort).

/// Below this length a partition is finished by insertion sort (a constant-factor
/// speed-up every practical quicksort makes; it does not change the growth).
const INSERTION_CUTOFF: usize = 16;

/// Sort `v` ascending in place: Hoare partitioning around the median of three, recursing
/// into the smaller side and looping on the larger one (stack depth `O(log x)`).
pub fn quicksort<T: Ord + Copy>(mut v: &mut [T]) {
    loop {
        let n = v.len();
        if n <= INSERTION_CUTOFF {
            insertion_sort(v);
            return;
        }
        let pivot = median_of_three(v[0], v[n / 2], v[n - 1]);
        let split = partition(v, pivot);
        let (left, right) = v.split_at_mut(split);
        if left.len() < right.len() {
            quicksort(left);
            v = right;
        } else {
            quicksort(right);
            v = left;
        }
    }
}

fn median_of_three<T: Ord + Copy>(a: T, b: T, c: T) -> T {
    if a < b {
        if b < c {
            b
        } else if a < c {
            c
        } else {
            a
        }
    } else if a < c {
        a
    } else if b < c {
        c
    } else {
        b
    }
}

/// Hoare partition: returns `s` with `0 < s < v.len()` such that every element of
/// `v[..s]` is `<= pivot` and every element of `v[s..]` is `>= pivot`.
///
/// Both scans stay in bounds: in the first round the pivot value itself (one of the three
/// sampled elements) stops them; afterwards the two just-swapped elements do. Because the
/// pivot is a median of three, the first round cannot stop `j` at the last index, so both
/// parts are non-empty and the sort always makes progress.
fn partition<T: Ord + Copy>(v: &mut [T], pivot: T) -> usize {
    let mut i = 0usize;
    let mut j = v.len() - 1;
    loop {
        while v[i] < pivot {
            i += 1;
        }
        while v[j] > pivot {
            j -= 1;
        }
        if i >= j {
            return j + 1;
        }
        v.swap(i, j);
        i += 1;
        j -= 1;
    }
}

fn insertion_sort<T: Ord + Copy>(v: &mut [T]) {
    for i in 1..v.len() {
        let x = v[i];
        let mut j = i;
        while j > 0 && v[j - 1] > x {
            v[j] = v[j - 1];
            j -= 1;
        }
        v[j] = x;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn sorts_like_the_standard_library(mut v in proptest::collection::vec(-50i32..50, 0..400)) {
            let mut expected = v.clone();
            expected.sort();
            quicksort(&mut v);
            prop_assert_eq!(v, expected);
        }
    }

    #[test]
    fn sorts_adversarial_shapes() {
        for v in [
            (0..1000).collect::<Vec<i32>>(),
            (0..1000).rev().collect(),
            vec![7; 1000],
            (0..1000).map(|i| i % 3).collect(),
        ] {
            let mut s = v.clone();
            quicksort(&mut s);
            let mut e = v;
            e.sort();
            assert_eq!(s, e);
        }
    }
}
