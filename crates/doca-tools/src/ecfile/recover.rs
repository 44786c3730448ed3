//! Recovering a file from its block set: the losses found, every stripe rebuilt
//! through DOCA EC recovery jobs, and the result proved to be the original.

use super::*;

/// How a recovered file was shown to be the original.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Proof {
    /// Its content digest matches the one the manifest recorded when it was encoded.
    Content,
    /// Every data block it was made of matches its recorded checksum (a version 1
    /// manifest records no digest of the whole file).
    Blocks,
    /// No checksums (DOCA's sample layout): the blocks left over after rebuilding agree
    /// with the rebuilt data; the length comes from `data_info`, which nothing checks.
    Consistent,
    /// Nothing could prove it, and why.
    Unproved(String),
}

/// What a recover did.
#[derive(Debug, Clone)]
pub struct RecoverReport {
    /// The layout found.
    pub layout: Layout,
    /// Blocks rebuilt, with why they were.
    pub rebuilt: Vec<String>,
    /// Where the original file was written.
    pub output: PathBuf,
    /// How the output was shown to be the original.
    pub proof: Proof,
    /// Why rebuilt blocks were not written back into the block directory, if they were
    /// not.
    pub not_written_back: Option<String>,
    /// Seconds spent.
    pub secs: f64,
}

/// Whether an I/O error says the file system is read-only.
fn read_only(e: &Error) -> bool {
    e.to_string().contains("Read-only file system")
}

/// Refuses a recover output that is one of the block set's own files (it would replace
/// a block or the manifest, or collide with a rebuilt block).
fn refuse_output_in_set(output: &Path, dir: &Path) -> Result<()> {
    let (Some(parent), Some(name)) = (output.parent(), output.file_name()) else {
        return Ok(());
    };
    let parent = if parent.as_os_str().is_empty() {
        Path::new(".")
    } else {
        parent
    };
    if let (Ok(a), Ok(b)) = (parent.canonicalize(), dir.canonicalize())
        && a == b
        && is_set_member(&name.to_string_lossy())
    {
        return Err(Error::with_context(
            ErrorCode::InvalidValue,
            format!(
                "'{}' is one of the block set's own files in '{}'; write the recovered file elsewhere",
                output.display(),
                dir.display()
            ),
        ));
    }
    Ok(())
}

/// The error for a loss the matrix cannot undo (possible with Vandermonde only).
fn unrecoverable(layout: &Layout, lost: &[usize]) -> Error {
    Error::with_context(
        ErrorCode::NotSupported,
        format!(
            "this loss ({}) cannot be undone: with the {} matrix, no {} of the remaining blocks are independent; nothing was written (cauchy matrices recover every loss of up to {} blocks)",
            lost.iter()
                .map(|&i| layout.block_file(i))
                .collect::<Vec<_>>()
                .join(", "),
            kind_name(layout.kind),
            layout.data,
            layout.rdnc
        ),
    )
}

fn not_written(msg: String) -> Error {
    Error::with_context(ErrorCode::Unexpected, format!("{msg}; nothing was written"))
}

/// Rebuilds the missing or damaged blocks of `dir` (at most K) and writes the original
/// file to `output`. Refuses an existing `output` unless `opts.force`.
///
/// Nothing is written unless the output is proved (see [`Proof`]) or nothing can prove
/// it: with a manifest, by its content digest (or block checksums); without one, by the
/// blocks the rebuild did not read, which must agree with the rebuilt data, and by the
/// padding past the file's end, which must be zeros. A block set that disagrees with
/// itself (a damaged block, a wrong matrix or count given for a sample directory) is
/// refused.
pub fn recover(
    dev: &Dev,
    dir: &Path,
    output: &Path,
    guess: Option<(MatrixType, usize, usize)>,
    opts: &Options,
) -> Result<RecoverReport> {
    let t = Instant::now();
    let layout = Layout::read(dir, guess)?;
    // With checksums, every block is checked in the pass that rebuilds (each read once):
    // the blocks are only looked at here. A block that turns out damaged counts as lost
    // and the rebuild runs again, its outputs from the first run never taking their names.
    let checked_late = layout.sums.is_some();
    let mut states = scan_with(dir, &layout, opts, !checked_late)?;
    loop {
        match rebuild(dev, dir, output, &layout, &states, checked_late, opts)? {
            Attempt::Done(mut report) => {
                report.secs = t.elapsed().as_secs_f64();
                return Ok(*report);
            }
            Attempt::Damaged(bad) => {
                for i in bad {
                    states[i] = BlockState::Damaged;
                }
            }
        }
    }
}

/// How one rebuild ended: done, or blocks read as intact turned out damaged (their
/// checksums, computed as they were read, do not match).
enum Attempt {
    Done(Box<RecoverReport>),
    Damaged(Vec<usize>),
}

/// A stripe coder with the recover matrix of the rebuild (none when nothing is missing:
/// the data blocks are only read and written).
struct RecoverStripe {
    coder: StripeCoder,
    matrix: Option<doca_ec::Matrix>,
}

/// One rebuild of `recover`, from the block states found. With `checked_late`, blocks in
/// the `Ok` state are checked against their checksums as they are read.
fn rebuild(
    dev: &Dev,
    dir: &Path,
    output: &Path,
    layout: &Layout,
    states: &[BlockState],
    checked_late: bool,
    opts: &Options,
) -> Result<Attempt> {
    let lost = losses(layout, states);
    if lost.len() > layout.rdnc {
        let intact = layout.count() - lost.len();
        return Err(Error::with_context(
            ErrorCode::NotFound,
            format!(
                "{} blocks are missing or damaged: {}; {} intact blocks remain but {} are needed ({} data + {} redundancy blocks can lose at most {})",
                lost.len(),
                lost.iter()
                    .map(|(_, s)| s.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
                intact,
                layout.data,
                layout.data,
                layout.rdnc,
                layout.rdnc
            ),
        ));
    }
    let lost_at: Vec<usize> = lost.iter().map(|(i, _)| *i).collect();
    let present: Vec<usize> = (0..layout.count())
        .filter(|i| !lost_at.contains(i))
        .collect();
    // M independent survivors (with a Vandermonde matrix the first M may not be); any
    // present block left out is rebuilt as well (and checked, never written back).
    let chosen = mds::independent_survivors(layout.kind, layout.data, layout.rdnc, &present)
        .ok_or_else(|| unrecoverable(layout, &lost_at))?;
    let mut missing: Vec<u32> = lost_at.iter().map(|&i| i as u32).collect();
    if chosen[..] != present[..layout.data] {
        missing.extend(
            present
                .iter()
                .filter(|i| !chosen.contains(i))
                .map(|&i| i as u32),
        );
    }
    refuse_output_in_set(output, dir)?;
    let out = AtomicFile::create(output, opts.force)?;
    out.reserve(layout.size)?;
    let stripe = stripe_len(layout, opts.stripe);
    // Two coders circulate, as in encode: the main thread reads a stripe of the sources
    // into one, rebuilds and hashes, while a writer thread writes the other's.
    let (to_writer, stripes) = std::sync::mpsc::sync_channel::<(u64, usize, RecoverStripe)>(1);
    let (give_back, free) = std::sync::mpsc::sync_channel::<RecoverStripe>(2);
    let mut sources: Vec<usize> = (0..layout.data).collect();
    for _ in 0..2 {
        let coder = StripeCoder::new(dev, layout.data, layout.rdnc.max(1), stripe)?;
        let matrix = if missing.is_empty() {
            None
        } else {
            let coding = coder
                .ec
                .matrix_create(layout.kind, layout.data, layout.rdnc)?;
            let r = coder.ec.recover_matrix_create(&coding, &missing)?;
            // Sources: the survivors the recover matrix reads.
            sources = r.survivors().unwrap_or_default().to_vec();
            Some(r)
        };
        let _ = give_back.send(RecoverStripe { coder, matrix });
    }
    let open = |i: usize| {
        let p = dir.join(layout.block_file(i));
        crate::open_regular(&p).map(|f| (p.clone(), f))
    };
    let files: Vec<(PathBuf, File)> = sources.iter().map(|&i| open(i)).collect::<Result<_>>()?;
    // The present blocks the rebuild does not read. With checksums they are read only
    // to be checked; without, they check the rebuild: the data is encoded again and
    // compared with them.
    let others: Vec<(usize, PathBuf, File)> = (0..layout.count())
        .filter(|i| states[*i] == BlockState::Ok && !sources.contains(i))
        .map(|i| open(i).map(|(p, f)| (i, p, f)))
        .collect::<Result<_>>()?;
    let mut on_disk: Vec<Xxh3> = others.iter().map(|_| Xxh3::new()).collect();
    let mut checker = if others.is_empty() || checked_late {
        None
    } else {
        let c = StripeCoder::new(dev, layout.data, layout.rdnc, stripe)?;
        let m = c.ec.matrix_create(layout.kind, layout.data, layout.rdnc)?;
        Some((c, m))
    };
    // Rebuilt blocks go back into the directory, unless asked not to or it cannot be
    // written (read-only): the file is recovered either way.
    let mut not_written_back =
        (!opts.write_back && !lost_at.is_empty()).then(|| "as asked (--no-write-back)".to_string());
    let mut rebuilt: Vec<Option<AtomicFile>> = Vec::with_capacity(missing.len());
    for &i in &missing {
        let i = i as usize;
        if !lost_at.contains(&i) || not_written_back.is_some() {
            rebuilt.push(None);
            continue;
        }
        match AtomicFile::create(&dir.join(layout.block_file(i)), true) {
            Ok(f) => {
                f.reserve(layout.block)?;
                rebuilt.push(Some(f));
            }
            Err(e) if e.code() == ErrorCode::NotPermitted || read_only(&e) => {
                not_written_back = Some(format!("'{}' cannot be written: {e}", dir.display()));
                rebuilt.iter_mut().for_each(|r| *r = None);
                rebuilt.push(None);
            }
            Err(e) => return Err(e),
        }
    }
    // The data blocks' stripe, side by side (for the check without checksums).
    let mut full = if checker.is_some() {
        crate::zeroed(layout.data * stripe, "the check's stripe")?
    } else {
        Vec::new()
    };
    let mut scratch = vec![0u8; if others.is_empty() { 0 } else { stripe }];
    let mut padding_ok = true;
    let mut disagree: Option<(usize, u64)> = None;
    let pb = progress(layout.block * layout.data as u64, "recover", opts.progress);
    let (ins_n, outs_n) = (sources.len(), missing.len());
    let (out_ref, rebuilt_ref, sources_ref, missing_ref) = (&out, &rebuilt, &sources, &missing);
    // Block i's stripe at `off`: its file bytes go into the original file.
    let put = move |i: usize, off: u64, bytes: &[u8]| -> Result<()> {
        let n = if i < layout.data {
            layout.file_bytes(i, off, bytes.len())
        } else {
            0
        };
        if n > 0 {
            write_at(
                out_ref.file_ref(),
                i as u64 * layout.block + off,
                &bytes[..n],
                out_ref.path(),
            )?;
        }
        Ok(())
    };
    let (main_result, digests) = std::thread::scope(|s| {
        // The writer: the file's bytes on its own thread, the rebuilt blocks going back
        // into the directory on a second, so that writing into the page cache, the
        // longest stage, runs on both cores. One file's writes do not overlap (the file
        // system serializes them), so each thread has files of its own.
        let writer = s.spawn(move || -> Result<()> {
            for (off, len, mut st) in stripes {
                let (ins, outs) = st.coder.areas_n(ins_n, outs_n, len)?;
                std::thread::scope(|w| {
                    let second = w.spawn(|| -> Result<()> {
                        for (chunk, r) in outs.chunks(len).zip(rebuilt_ref) {
                            if let Some(r) = r {
                                write_at(r.file_ref(), off, chunk, r.path())?;
                            }
                        }
                        Ok(())
                    });
                    let blocks = ins.chunks(len).zip(sources_ref.iter().copied()).chain(
                        outs.chunks(len)
                            .zip(missing_ref.iter().map(|&i| i as usize)),
                    );
                    for (chunk, i) in blocks {
                        put(i, off, chunk)?;
                    }
                    writer_result(second.join())
                })?;
                // The main thread may have stopped; the coder is then simply dropped.
                let _ = give_back.send(st);
            }
            Ok(())
        });
        let mut hashers = BlockHashers::new(layout);
        let mut off = 0u64;
        let r = (|| -> Result<()> {
            while off < layout.block {
                crate::cleanup::interrupted()?;
                let len = stripe.min((layout.block - off) as usize);
                // No coder back: the writer stopped (its error is reported below).
                let Ok(mut st) = free.recv() else {
                    return Ok(());
                };
                let fill = |ins: &mut [u8]| -> Result<()> {
                    for (k, chunk) in ins.chunks_mut(len).enumerate() {
                        let (p, f) = &files[k];
                        read_padded(f, off, chunk, p)?;
                    }
                    Ok(())
                };
                match &st.matrix {
                    Some(m) => st.coder.code::<Recover>(m, len, fill)?,
                    None => st.coder.load(ins_n * len, fill)?,
                }
                let (ins, outs) = st.coder.areas_n(ins_n, outs_n, len)?;
                let blocks = ins
                    .chunks(len)
                    .zip(sources.iter().copied())
                    .chain(outs.chunks(len).zip(missing.iter().map(|&i| i as usize)));
                for (chunk, i) in blocks {
                    hashers.update(i, off, chunk);
                    if i < layout.data {
                        let n = layout.file_bytes(i, off, len);
                        padding_ok &= chunk[n..].iter().all(|&b| b == 0);
                        if !full.is_empty() {
                            full[i * len..(i + 1) * len].copy_from_slice(chunk);
                        }
                    }
                }
                if checked_late {
                    for ((_, p, f), h) in others.iter().zip(&mut on_disk) {
                        read_padded(f, off, &mut scratch[..len], p)?;
                        h.update(&scratch[..len]);
                    }
                }
                if let Some((c, m)) = checker.as_mut()
                    && disagree.is_none()
                {
                    let data = &full[..layout.data * len];
                    c.run::<Create>(
                        m,
                        len,
                        |ins| {
                            ins.copy_from_slice(data);
                            Ok(())
                        },
                        |parity| {
                            for (i, p, file) in &others {
                                let ours = if *i < layout.data {
                                    &data[i * len..(i + 1) * len]
                                } else {
                                    &parity[(i - layout.data) * len..(i - layout.data + 1) * len]
                                };
                                read_padded(file, off, &mut scratch[..len], p)?;
                                if let Some(at) =
                                    ours.iter().zip(&scratch[..len]).position(|(a, b)| a != b)
                                {
                                    disagree = Some((*i, off + at as u64));
                                    break;
                                }
                            }
                            Ok(())
                        },
                    )?;
                }
                if to_writer.send((off, len, st)).is_err() {
                    return Ok(());
                }
                off += len as u64;
                pb.inc((len * layout.data) as u64);
            }
            Ok(())
        })();
        drop(to_writer);
        let digests = writer_result(writer.join()).map(|()| hashers.finish());
        (r, digests)
    });
    pb.finish_and_clear();
    main_result?;
    let (digests, content) = digests?;
    if let (true, Some(want)) = (checked_late, &layout.sums) {
        let read = sources.iter().map(|&i| (i, digests[i])).chain(
            others
                .iter()
                .zip(&on_disk)
                .map(|((i, _, _), h)| (*i, h.digest())),
        );
        let bad: Vec<usize> = read
            .filter(|&(i, d)| d != want[i])
            .map(|(i, _)| i)
            .collect();
        if !bad.is_empty() {
            return Ok(Attempt::Damaged(bad));
        }
    }
    if let Some(want) = &layout.sums {
        for &i in &missing {
            if digests[i as usize] != want[i as usize] {
                return Err(not_written(format!(
                    "rebuilt {} does not match its checksum: other blocks are damaged in ways the checksums did not show",
                    layout.block_file(i as usize)
                )));
            }
        }
    }
    if let Some((i, at)) = disagree {
        return Err(not_written(format!(
            "the blocks disagree: {} differs at byte {at} from what the other blocks give; a block is damaged, or the matrix and counts (-x, -t, -r) are not the ones the blocks were made with",
            layout.block_file(i)
        )));
    }
    let proof = match (layout.content, &layout.sums) {
        (Some(want), _) => {
            if content != want {
                return Err(not_written(
                    "the recovered file does not match the digest of the original recorded when it was encoded".into(),
                ));
            }
            Proof::Content
        }
        (None, Some(_)) => Proof::Blocks,
        (None, None) => {
            if !padding_ok {
                return Err(not_written(format!(
                    "the data blocks hold bytes past the {} bytes {DATA_INFO} gives as the file's size: {DATA_INFO} is wrong, or the matrix and counts (-x, -t, -r) are",
                    layout.size
                )));
            }
            let expected = Layout::for_file(
                layout.size,
                &layout.name,
                layout.kind,
                layout.data,
                layout.rdnc,
            )
            .map(|l| l.block)
            .unwrap_or(0);
            if expected != layout.block {
                Proof::Unproved(format!(
                    "{DATA_INFO} gives {} bytes, which make blocks of {expected} bytes, but the blocks hold {}: the size cannot be trusted",
                    layout.size, layout.block
                ))
            } else if checker.is_some() {
                Proof::Consistent
            } else {
                Proof::Unproved(format!(
                    "there is no {MANIFEST} with checksums, and no block is left over to check the rebuilt data against ({} of {} redundancy blocks were needed)",
                    missing.len(),
                    layout.rdnc
                ))
            }
        }
    };
    out.file_ref()
        .set_len(layout.size)
        .map_err(|e| io_error(format!("cannot write '{}'", output.display()), &e))?;
    for r in rebuilt.into_iter().flatten() {
        r.commit_with(opts.sync)?;
    }
    out.commit_with(opts.sync)?;
    Ok(Attempt::Done(Box::new(RecoverReport {
        rebuilt: lost.into_iter().map(|(_, s)| s).collect(),
        layout: layout.clone(),
        output: output.to_path_buf(),
        proof,
        not_written_back,
        secs: 0.0,
    })))
}
