/*
 * A small storage system in C++17 with the shape of DOCA's storage reference application:
 * a host initiator sends block I/O over comch to a service on the DPU, which reaches
 * storage targets by RDMA through the connection manager.
 *
 *   storage_standin split FILE DIR BLOCK cauchy|vandermonde
 *       DIR/data1, DIR/data2, DIR/parity: each block's halves and their parity (an EC
 *       create task, two data blocks and one redundancy block)
 *   storage_standin target PORT FILE
 *       a storage machine: FILE's bytes, exported for RDMA to whoever connects on PORT;
 *       carries out the zero-copy service's requests (RDMA writes into, and reads from,
 *       the host's memory the service exported again)
 *   storage_standin service gga NAME BLOCK cauchy|vandermonde EVERY ADDR:PORT x3   (DPU)
 *       reads each block's halves from the data-1 and data-2 targets; every EVERY-th read
 *       (0: never), and always once a data target is lost, rebuilds one half from the
 *       other and the parity target's block with an EC recover task; DMAs the block into
 *       the host's memory
 *   storage_standin service zc NAME BLOCK ADDR:PORT   (DPU)
 *       hands each request to the target, which moves the bytes itself between its
 *       storage and the host's memory (zero copy through the DPU)
 *   storage_standin initiator NAME read FILE BLOCK PASSES   (host)
 *       reads every block of FILE PASSES times and checks each against FILE
 *   storage_standin initiator NAME write-read BLOCKS BLOCK PASSES   (host)
 *       writes BLOCKS blocks of a pattern that changes every pass and reads them back
 *
 * A service ends when its host disconnects; a target when its service does. An initiator
 * that loses its service says so and ends with status 3 (never waits forever). With
 * STANDIN_PROGRESS set, an initiator writes the number of blocks done to that file.
 */
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include <doca_buf.h>
#include <doca_buf_inventory.h>
#include <doca_comch.h>
#include <doca_ctx.h>
#include <doca_dev.h>
#include <doca_dma.h>
#include <doca_erasure_coding.h>
#include <doca_error.h>
#include <doca_mmap.h>
#include <doca_pe.h>
#include <doca_rdma.h>

namespace {

using Clock = std::chrono::steady_clock;

[[noreturn]] void die(const std::string &what, doca_error_t r)
{
	std::fprintf(stderr, "%s: %s (%s)\n", what.c_str(), doca_error_get_name(r), doca_error_get_descr(r));
	std::exit(1);
}

void check(doca_error_t r, const char *what)
{
	if (r != DOCA_SUCCESS)
		die(what, r);
}

#define CK(expr) check((expr), #expr)

[[noreturn]] void fail(const std::string &why)
{
	std::fprintf(stderr, "%s\n", why.c_str());
	std::exit(1);
}

double since(Clock::time_point t)
{
	return std::chrono::duration<double>(Clock::now() - t).count();
}

void nap()
{
	std::this_thread::sleep_for(std::chrono::microseconds(20));
}

std::vector<uint8_t> read_file(const std::string &path)
{
	std::ifstream f(path, std::ios::binary);
	if (!f)
		fail("cannot read " + path);
	return std::vector<uint8_t>(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

void write_file(const std::string &path, const uint8_t *p, size_t n)
{
	std::ofstream f(path, std::ios::binary);
	f.write(reinterpret_cast<const char *>(p), static_cast<std::streamsize>(n));
	if (!f)
		fail("cannot write " + path);
}

/* A task's end, recorded by its callbacks (the task's user data points here). */
struct Result {
	bool done = false;
	doca_error_t status = DOCA_SUCCESS;
};

template <typename T, doca_task *(*AsTask)(T *)>
void on_done(T *task, union doca_data task_user_data, union doca_data ctx_user_data)
{
	(void)ctx_user_data;
	Result *r = static_cast<Result *>(task_user_data.ptr);

	r->status = doca_task_get_status(AsTask(task));
	r->done = true;
}

/* Progresses until every result is in; false after `secs` seconds. */
bool wait_all(doca_pe *pe, std::initializer_list<Result *> rs, double secs)
{
	Clock::time_point t = Clock::now();

	for (;;) {
		bool all = true;

		for (Result *r : rs)
			all = all && r->done;
		if (all)
			return true;
		if (doca_pe_progress(pe) == 0)
			nap();
		if (since(t) > secs)
			return false;
	}
}

doca_dev *open_dev_at(const char *pci)
{
	doca_devinfo **list;
	doca_dev *dev = nullptr;
	uint32_t n = 0;

	CK(doca_devinfo_create_list(&list, &n));
	for (uint32_t i = 0; i < n && dev == nullptr; i++) {
		uint8_t is_addr = 0;

		CK(doca_devinfo_is_equal_pci_addr(list[i], pci, &is_addr));
		if (is_addr)
			CK(doca_dev_open(list[i], &dev));
	}
	CK(doca_devinfo_destroy_list(list));
	if (dev == nullptr)
		fail(std::string("no device at ") + pci);
	return dev;
}

doca_dev *open_rdma_dev()
{
	doca_devinfo **list;
	doca_dev *dev = nullptr;
	uint32_t n = 0;

	CK(doca_devinfo_create_list(&list, &n));
	for (uint32_t i = 0; i < n && dev == nullptr; i++)
		if (doca_rdma_cap_task_read_is_supported(list[i]) == DOCA_SUCCESS)
			CK(doca_dev_open(list[i], &dev));
	CK(doca_devinfo_destroy_list(list));
	if (dev == nullptr)
		fail("no device runs RDMA tasks");
	return dev;
}

/* Bytes of this process mapped on a device, with an inventory for buffers on them. */
struct Mem {
	std::vector<uint8_t> bytes;
	doca_mmap *mmap = nullptr;
	doca_buf_inventory *inv = nullptr;

	Mem(doca_dev *dev, std::vector<uint8_t> b, uint32_t perms) : bytes(std::move(b))
	{
		CK(doca_mmap_create(&mmap));
		CK(doca_mmap_set_memrange(mmap, bytes.data(), bytes.size()));
		CK(doca_mmap_set_permissions(mmap, perms));
		CK(doca_mmap_add_dev(mmap, dev));
		CK(doca_mmap_start(mmap));
		CK(doca_buf_inventory_create(16, &inv));
		CK(doca_buf_inventory_start(inv));
	}
	~Mem()
	{
		CK(doca_buf_inventory_stop(inv));
		CK(doca_buf_inventory_destroy(inv));
		CK(doca_mmap_stop(mmap));
		CK(doca_mmap_destroy(mmap));
	}
	Mem(const Mem &) = delete;
	Mem &operator=(const Mem &) = delete;

	/* A buffer holding `len` bytes at `off`, or empty there (a destination). */
	doca_buf *buf(size_t off, size_t len, bool with_data)
	{
		doca_buf *b;
		uint8_t *p = bytes.data() + off;

		if (with_data)
			CK(doca_buf_inventory_buf_get_by_data(inv, mmap, p, len, &b));
		else
			CK(doca_buf_inventory_buf_get_by_addr(inv, mmap, p, len, &b));
		return b;
	}
};

/* Memory another process exported to us. */
struct Remote {
	doca_mmap *mmap = nullptr;
	uint8_t *base = nullptr;
	size_t len = 0;

	Remote(doca_dev *dev, const void *desc, size_t n)
	{
		void *addr;

		CK(doca_mmap_create_from_export(nullptr, desc, n, dev, &mmap));
		CK(doca_mmap_get_memrange(mmap, &addr, &len));
		base = static_cast<uint8_t *>(addr);
	}
	~Remote()
	{
		CK(doca_mmap_destroy(mmap));
	}
	Remote(const Remote &) = delete;
	Remote &operator=(const Remote &) = delete;

	doca_buf *buf(doca_buf_inventory *inv, size_t off, size_t n, bool with_data)
	{
		doca_buf *b;

		if (off + n > len)
			fail("a request reaches past the remote memory");
		if (with_data)
			CK(doca_buf_inventory_buf_get_by_data(inv, mmap, base + off, n, &b));
		else
			CK(doca_buf_inventory_buf_get_by_addr(inv, mmap, base + off, n, &b));
		return b;
	}
};

void put(doca_buf *b)
{
	CK(doca_buf_dec_refcount(b, nullptr));
}

/* ---- messages ---- */

constexpr uint32_t kMagic = 0x53544e44;

enum Kind : uint32_t {
	kHostMem = 1,	/* host -> service: the host memory's export (bytes follow) */
	kReady = 2,	/* service -> host */
	kIo = 3,	/* host -> service -> target (zero copy) */
	kDone = 4,	/* back */
	kStorage = 5,	/* target -> service: its storage's export (bytes follow) */
	kHostMemRdma = 6 /* service -> target: the host memory, exported again (bytes follow) */
};

struct Msg {
	uint32_t magic;
	uint32_t kind;
	uint32_t id;
	uint32_t write; /* kIo: 1 write, 0 read */
	uint64_t block;
	uint64_t host_off;
	uint32_t len;
	uint32_t status; /* kDone: a doca_error_t */
	char text[96];	 /* kDone: what failed */
};

std::vector<uint8_t> encode(const Msg &m, const void *extra = nullptr, size_t n = 0)
{
	std::vector<uint8_t> v(sizeof(Msg) + n);

	std::memcpy(v.data(), &m, sizeof(Msg));
	if (n)
		std::memcpy(v.data() + sizeof(Msg), extra, n);
	return v;
}

bool decode(const uint8_t *p, size_t n, Msg &m, std::vector<uint8_t> *extra)
{
	if (n < sizeof(Msg))
		return false;
	std::memcpy(&m, p, sizeof(Msg));
	if (m.magic != kMagic)
		return false;
	if (extra)
		extra->assign(p + sizeof(Msg), p + n);
	return true;
}

Msg make(Kind k)
{
	Msg m;

	std::memset(&m, 0, sizeof(m));
	m.magic = kMagic;
	m.kind = k;
	return m;
}

/* ---- RDMA through the connection manager ---- */

constexpr uint32_t kRdmaTasks = 16;
constexpr size_t kRecvSlot = 4096;
constexpr uint32_t kRecvs = 4;

struct RdmaSide {
	doca_dev *dev = nullptr;
	doca_rdma *rdma = nullptr;
	doca_rdma_connection *conn = nullptr;
	bool server = false;
	bool established = false;
	bool failed = false;
	bool disconnected = false;
	/* Posted receives: their buffers, tasks and results, one slot each. */
	Mem *recv_mem = nullptr;
	doca_buf *recv_buf[kRecvs] = {};
	doca_rdma_task_receive *recv_task[kRecvs] = {};
	Result recv_res[kRecvs];
	uint32_t next_recv = 0;
};

void conn_request(doca_rdma_connection *conn, union doca_data ctx_user_data)
{
	RdmaSide *s = static_cast<RdmaSide *>(ctx_user_data.ptr);

	if (s->conn != nullptr) {
		(void)doca_rdma_connection_reject(conn);
		return;
	}
	CK(doca_rdma_connection_accept(conn, nullptr, 0));
	s->conn = conn;
}

void conn_established(doca_rdma_connection *conn, union doca_data cud, union doca_data ctx_user_data)
{
	(void)cud;
	RdmaSide *s = static_cast<RdmaSide *>(ctx_user_data.ptr);

	s->conn = conn;
	s->established = true;
}

void conn_failure(doca_rdma_connection *conn, union doca_data cud, union doca_data ctx_user_data)
{
	(void)conn;
	(void)cud;
	static_cast<RdmaSide *>(ctx_user_data.ptr)->failed = true;
}

void conn_disconnect(doca_rdma_connection *conn, union doca_data cud, union doca_data ctx_user_data)
{
	(void)conn;
	(void)cud;
	static_cast<RdmaSide *>(ctx_user_data.ptr)->disconnected = true;
}

#define RDMA_CONF(type)                                                                                        \
	CK(doca_rdma_task_##type##_set_conf(s.rdma, on_done<doca_rdma_task_##type, doca_rdma_task_##type##_as_task>, \
					    on_done<doca_rdma_task_##type, doca_rdma_task_##type##_as_task>,   \
					    kRdmaTasks))

void rdma_open(RdmaSide &s, doca_dev *dev, doca_pe *pe)
{
	union doca_data ud;

	ud.ptr = &s;
	s.dev = dev;
	CK(doca_rdma_create(dev, &s.rdma));
	CK(doca_rdma_set_permissions(s.rdma, DOCA_ACCESS_FLAG_LOCAL_READ_WRITE | DOCA_ACCESS_FLAG_RDMA_READ |
						     DOCA_ACCESS_FLAG_RDMA_WRITE));
	CK(doca_rdma_set_max_num_connections(s.rdma, 1));
	RDMA_CONF(send);
	RDMA_CONF(receive);
	RDMA_CONF(read);
	RDMA_CONF(write);
	CK(doca_rdma_set_connection_state_callbacks(s.rdma, conn_request, conn_established, conn_failure,
						    conn_disconnect));
	CK(doca_ctx_set_user_data(doca_rdma_as_ctx(s.rdma), ud));
	CK(doca_pe_connect_ctx(pe, doca_rdma_as_ctx(s.rdma)));
	CK(doca_ctx_start(doca_rdma_as_ctx(s.rdma)));
	s.recv_mem = new Mem(dev, std::vector<uint8_t>(kRecvSlot * kRecvs), DOCA_ACCESS_FLAG_LOCAL_READ_WRITE);
}

void post_recv(RdmaSide &s, uint32_t i)
{
	union doca_data ud;

	if (s.recv_buf[i] == nullptr)
		s.recv_buf[i] = s.recv_mem->buf(i * kRecvSlot, kRecvSlot, false);
	CK(doca_buf_reset_data_len(s.recv_buf[i]));
	s.recv_res[i] = Result();
	ud.ptr = &s.recv_res[i];
	CK(doca_rdma_task_receive_allocate_init(s.rdma, s.recv_buf[i], ud, &s.recv_task[i]));
	CK(doca_task_submit(doca_rdma_task_receive_as_task(s.recv_task[i])));
}

/* The next message received, in the order the receives were posted (the receive is
 * posted again); false when none came within `secs`, the receive failed, or the
 * connection ended (a receive belongs to no connection: it stays posted). */
bool next_msg(doca_pe *pe, RdmaSide &s, Msg &m, std::vector<uint8_t> *extra, double secs)
{
	uint32_t i = s.next_recv;
	Clock::time_point t = Clock::now();

	while (!s.recv_res[i].done) {
		if (s.disconnected || s.failed || since(t) > secs)
			return false;
		if (doca_pe_progress(pe) == 0)
			nap();
	}
	if (s.recv_res[i].status != DOCA_SUCCESS) {
		doca_task_free(doca_rdma_task_receive_as_task(s.recv_task[i]));
		s.recv_task[i] = nullptr;
		return false;
	}
	size_t n = doca_rdma_task_receive_get_result_len(s.recv_task[i]);
	bool ok = decode(s.recv_mem->bytes.data() + i * kRecvSlot, n, m, extra);

	doca_task_free(doca_rdma_task_receive_as_task(s.recv_task[i]));
	s.recv_task[i] = nullptr;
	post_recv(s, i);
	s.next_recv = (i + 1) % kRecvs;
	if (!ok)
		fail("a message that is not ours arrived");
	return true;
}

/* Sends `bytes`; the send's status. */
doca_error_t rdma_send(doca_pe *pe, RdmaSide &s, const std::vector<uint8_t> &bytes)
{
	Mem m(s.dev, bytes, DOCA_ACCESS_FLAG_LOCAL_READ_WRITE);
	doca_buf *b = m.buf(0, bytes.size(), true);
	doca_rdma_task_send *t;
	Result r;
	union doca_data ud;

	ud.ptr = &r;
	CK(doca_rdma_task_send_allocate_init(s.rdma, s.conn, b, ud, &t));
	r.status = doca_task_submit(doca_rdma_task_send_as_task(t));
	if (r.status != DOCA_SUCCESS) {
		/* Refused (the connection ended): nothing was sent. */
		doca_task_free(doca_rdma_task_send_as_task(t));
		put(b);
		return r.status;
	}
	if (!wait_all(pe, {&r}, 30))
		fail("an RDMA send did not complete within 30 s");
	doca_task_free(doca_rdma_task_send_as_task(t));
	put(b);
	return r.status;
}

void rdma_close(doca_pe *pe, RdmaSide &s)
{
	doca_ctx *ctx = doca_rdma_as_ctx(s.rdma);
	enum doca_ctx_states st;
	Clock::time_point t = Clock::now();

	(void)doca_ctx_stop(ctx);
	for (;;) {
		/* The stop ends the posted receives; each is freed once it has. */
		for (uint32_t i = 0; i < kRecvs; i++) {
			if (s.recv_task[i] && s.recv_res[i].done) {
				doca_task_free(doca_rdma_task_receive_as_task(s.recv_task[i]));
				s.recv_task[i] = nullptr;
			}
		}
		CK(doca_ctx_get_state(ctx, &st));
		if (st == DOCA_CTX_STATE_IDLE)
			break;
		(void)doca_pe_progress(pe);
		if (since(t) > 30)
			fail("an RDMA context did not stop within 30 s");
	}
	for (uint32_t i = 0; i < kRecvs; i++) {
		if (s.recv_task[i])
			doca_task_free(doca_rdma_task_receive_as_task(s.recv_task[i]));
		if (s.recv_buf[i])
			put(s.recv_buf[i]);
	}
	delete s.recv_mem;
	CK(doca_rdma_destroy(s.rdma));
}

/* ---- split: a file's halves and their parity ---- */

doca_ec_matrix_type matrix_type(const std::string &name)
{
	if (name == "cauchy")
		return DOCA_EC_MATRIX_TYPE_CAUCHY;
	if (name == "vandermonde")
		return DOCA_EC_MATRIX_TYPE_VANDERMONDE;
	fail("matrix type " + name + ": cauchy or vandermonde");
}

int split(const std::string &file, const std::string &dir, size_t block, const std::string &type)
{
	std::vector<uint8_t> data = read_file(file);
	size_t half = block / 2, blocks = data.size() / block;

	if (block % 128 != 0 || data.size() % block != 0 || blocks == 0)
		fail("the file must hold whole blocks, and a block a multiple of 128 bytes");
	doca_dev *dev = open_rdma_dev();
	doca_pe *pe;
	doca_ec *ec;
	doca_ec_matrix *matrix;

	CK(doca_pe_create(&pe));
	CK(doca_ec_create(dev, &ec));
	CK(doca_ec_task_create_set_conf(ec, on_done<doca_ec_task_create, doca_ec_task_create_as_task>,
					on_done<doca_ec_task_create, doca_ec_task_create_as_task>, 2));
	CK(doca_pe_connect_ctx(pe, doca_ec_as_ctx(ec)));
	CK(doca_ctx_start(doca_ec_as_ctx(ec)));
	CK(doca_ec_matrix_create(ec, matrix_type(type), 2, 1, &matrix));
	Mem src(dev, data, DOCA_ACCESS_FLAG_LOCAL_READ_WRITE);
	Mem parity(dev, std::vector<uint8_t>(blocks * half), DOCA_ACCESS_FLAG_LOCAL_READ_WRITE);
	std::vector<uint8_t> d1, d2;

	for (size_t b = 0; b < blocks; b++) {
		doca_buf *in = src.buf(b * block, block, true);
		doca_buf *out = parity.buf(b * half, half, false);
		doca_ec_task_create *t;
		Result r;
		union doca_data ud;

		ud.ptr = &r;
		CK(doca_ec_task_create_allocate_init(ec, matrix, in, out, ud, &t));
		CK(doca_task_submit(doca_ec_task_create_as_task(t)));
		if (!wait_all(pe, {&r}, 30))
			fail("an EC create task did not complete");
		CK(r.status);
		doca_task_free(doca_ec_task_create_as_task(t));
		put(in);
		put(out);
		d1.insert(d1.end(), data.begin() + b * block, data.begin() + b * block + half);
		d2.insert(d2.end(), data.begin() + b * block + half, data.begin() + (b + 1) * block);
	}
	write_file(dir + "/data1", d1.data(), d1.size());
	write_file(dir + "/data2", d2.data(), d2.size());
	write_file(dir + "/parity", parity.bytes.data(), parity.bytes.size());
	CK(doca_ec_matrix_destroy(matrix));
	CK(doca_ctx_stop(doca_ec_as_ctx(ec)));
	CK(doca_ec_destroy(ec));
	CK(doca_pe_destroy(pe));
	CK(doca_dev_close(dev));
	std::printf("split: %zu blocks of %zu bytes into data1, data2 and parity (%s)\n", blocks, block,
		    type.c_str());
	return 0;
}

/* ---- target ---- */

int target(uint16_t port, const std::string &file)
{
	doca_dev *dev = open_rdma_dev();
	doca_pe *pe;
	RdmaSide s;
	Mem store(dev, read_file(file),
		  DOCA_ACCESS_FLAG_LOCAL_READ_WRITE | DOCA_ACCESS_FLAG_RDMA_READ | DOCA_ACCESS_FLAG_RDMA_WRITE);
	Remote *host = nullptr;
	const void *desc;
	size_t desc_len;
	long served = 0;

	s.server = true;
	CK(doca_pe_create(&pe));
	rdma_open(s, dev, pe);
	CK(doca_rdma_start_listen_to_port(s.rdma, port));
	std::printf("target: %zu bytes of %s, listening on port %u\n", store.bytes.size(), file.c_str(), port);
	std::fflush(stdout);
	while (!s.established) {
		if (doca_pe_progress(pe) == 0)
			nap();
	}
	for (uint32_t i = 0; i < kRecvs; i++)
		post_recv(s, i);
	CK(doca_mmap_export_rdma(store.mmap, dev, &desc, &desc_len));
	Msg hello = make(kStorage);
	CK(rdma_send(pe, s, encode(hello, desc, desc_len)));
	for (;;) {
		Msg m;
		std::vector<uint8_t> extra;

		if (!next_msg(pe, s, m, &extra, 1e9))
			break; /* the service left: its connection ended */
		if (m.kind == kHostMemRdma) {
			host = new Remote(dev, extra.data(), extra.size());
			continue;
		}
		if (m.kind != kIo || host == nullptr)
			fail("an unexpected message");
		/* Zero copy: the block moves between this storage and the host's memory. */
		size_t off = m.block * m.len;
		Msg done = make(kDone);
		Result r;
		union doca_data ud;
		doca_buf *local, *remote;

		done.id = m.id;
		ud.ptr = &r;
		if (off + m.len > store.bytes.size()) {
			done.status = DOCA_ERROR_INVALID_VALUE;
			std::snprintf(done.text, sizeof(done.text), "block %llu is past the end of the storage",
				      static_cast<unsigned long long>(m.block));
		} else if (m.write) {
			doca_rdma_task_read *t;

			remote = host->buf(store.inv, m.host_off, m.len, true);
			local = store.buf(off, m.len, false);
			CK(doca_rdma_task_read_allocate_init(s.rdma, s.conn, remote, local, ud, &t));
			r.status = doca_task_submit(doca_rdma_task_read_as_task(t));
			r.done = r.status != DOCA_SUCCESS; /* refused: the service is gone */
			if (!wait_all(pe, {&r}, 30))
				fail("an RDMA read did not complete within 30 s");
			doca_task_free(doca_rdma_task_read_as_task(t));
			done.status = r.status;
			put(remote);
			put(local);
		} else {
			doca_rdma_task_write *t;

			local = store.buf(off, m.len, true);
			remote = host->buf(store.inv, m.host_off, m.len, false);
			CK(doca_rdma_task_write_allocate_init(s.rdma, s.conn, local, remote, ud, &t));
			r.status = doca_task_submit(doca_rdma_task_write_as_task(t));
			r.done = r.status != DOCA_SUCCESS; /* refused: the service is gone */
			if (!wait_all(pe, {&r}, 30))
				fail("an RDMA write did not complete within 30 s");
			doca_task_free(doca_rdma_task_write_as_task(t));
			done.status = r.status;
			put(local);
			put(remote);
		}
		if (done.status != DOCA_SUCCESS && done.text[0] == 0)
			std::snprintf(done.text, sizeof(done.text), "the target's RDMA %s failed: %s",
				      m.write ? "read" : "write", doca_error_get_name(static_cast<doca_error_t>(done.status)));
		served++;
		if (rdma_send(pe, s, encode(done)) != DOCA_SUCCESS)
			break;
	}
	std::printf("target: the service left; %ld requests carried out\n", served);
	delete host;
	rdma_close(pe, s);
	CK(doca_pe_destroy(pe));
	CK(doca_dev_close(dev));
	return 0;
}

/* ---- comch ---- */

struct Channel {
	std::deque<std::vector<uint8_t>> inbox;
	doca_comch_connection *conn = nullptr;
	bool gone = false;
	enum doca_ctx_states state = DOCA_CTX_STATE_IDLE;
	int sends_failed = 0;
};

Channel chan;

void msg_recv(doca_comch_event_msg_recv *ev, uint8_t *buf, uint32_t len, doca_comch_connection *conn)
{
	(void)ev;
	chan.conn = conn;
	chan.inbox.emplace_back(buf, buf + len);
}

void comch_sent(doca_comch_task_send *task, union doca_data tud, union doca_data cud)
{
	(void)cud;
	delete static_cast<std::vector<uint8_t> *>(tud.ptr);
	doca_task_free(doca_comch_task_send_as_task(task));
}

void comch_send_failed(doca_comch_task_send *task, union doca_data tud, union doca_data cud)
{
	(void)cud;
	chan.sends_failed++;
	delete static_cast<std::vector<uint8_t> *>(tud.ptr);
	doca_task_free(doca_comch_task_send_as_task(task));
}

void state_changed(const union doca_data ud, doca_ctx *ctx, enum doca_ctx_states prev, enum doca_ctx_states next)
{
	(void)ud;
	(void)ctx;
	(void)prev;
	chan.state = next;
}

#ifdef DOCA_ARCH_DPU
doca_comch_server *server_ctx;
#else
doca_comch_client *client_ctx;
#endif

/* Sends one message to the other side (the bytes live until the send completes). */
doca_error_t comch_send(const std::vector<uint8_t> &bytes)
{
	doca_comch_task_send *t;
	auto *keep = new std::vector<uint8_t>(bytes);
	union doca_data ud;
	doca_error_t r;

	ud.ptr = keep;
#ifdef DOCA_ARCH_DPU
	r = doca_comch_server_task_send_alloc_init(server_ctx, chan.conn, keep->data(),
						   static_cast<uint32_t>(keep->size()), &t);
#else
	r = doca_comch_client_task_send_alloc_init(client_ctx, chan.conn, keep->data(),
						   static_cast<uint32_t>(keep->size()), &t);
#endif
	if (r != DOCA_SUCCESS) {
		delete keep;
		return r;
	}
	doca_task_set_user_data(doca_comch_task_send_as_task(t), ud);
	r = doca_task_submit(doca_comch_task_send_as_task(t));
	if (r != DOCA_SUCCESS) {
		delete keep;
		doca_task_free(doca_comch_task_send_as_task(t));
	}
	return r;
}

/* Waits for the next message on the channel; false when the channel ended, a send
 * failed, or nothing came within `secs`. */
bool comch_next(doca_pe *pe, Msg &m, std::vector<uint8_t> *extra, double secs, bool *timed_out)
{
	Clock::time_point t = Clock::now();

	*timed_out = false;
	while (chan.inbox.empty()) {
		if (chan.gone || chan.sends_failed || chan.state != DOCA_CTX_STATE_RUNNING)
			return false;
		if (doca_pe_progress(pe) == 0)
			nap();
		if (since(t) > secs) {
			*timed_out = true;
			return false;
		}
	}
	std::vector<uint8_t> v = std::move(chan.inbox.front());

	chan.inbox.pop_front();
	if (!decode(v.data(), v.size(), m, extra))
		fail("a message that is not ours came over comch");
	return true;
}

/* ---- service (DPU) ---- */

#ifdef DOCA_ARCH_DPU

void connected(doca_comch_event_connection_status_changed *ev, doca_comch_connection *conn, uint8_t ok)
{
	(void)ev;
	if (ok)
		chan.conn = conn;
}

void disconnected(doca_comch_event_connection_status_changed *ev, doca_comch_connection *conn, uint8_t ok)
{
	(void)ev;
	(void)conn;
	(void)ok;
	chan.gone = true;
}


struct Target {
	std::string addr;
	RdmaSide side;
	Remote *store = nullptr;
	bool lost = false;
};

void connect_target(doca_dev *dev, doca_pe *pe, Target &t)
{
	size_t colon = t.addr.rfind(':');
	doca_rdma_addr *addr;
	union doca_data cud;

	if (colon == std::string::npos)
		fail("a target is ADDRESS:PORT, not " + t.addr);
	rdma_open(t.side, dev, pe);
	cud.u64 = 0;
	CK(doca_rdma_addr_create(DOCA_RDMA_ADDR_TYPE_IPv4, t.addr.substr(0, colon).c_str(),
				 static_cast<uint16_t>(std::stoi(t.addr.substr(colon + 1))), &addr));
	Clock::time_point start = Clock::now();

	/* A target that is not listening yet refuses: ask again for 30 s. */
	for (;;) {
		t.side.failed = false;
		CK(doca_rdma_connect_to_addr(t.side.rdma, addr, cud));
		while (!t.side.established && !t.side.failed)
			if (doca_pe_progress(pe) == 0)
				nap();
		if (t.side.established)
			break;
		if (since(start) > 30)
			fail("cannot connect to the target at " + t.addr);
		std::this_thread::sleep_for(std::chrono::milliseconds(100));
	}
	CK(doca_rdma_addr_destroy(addr));
	for (uint32_t i = 0; i < kRecvs; i++)
		post_recv(t.side, i);
	Msg m;
	std::vector<uint8_t> desc;

	if (!next_msg(pe, t.side, m, &desc, 30) || m.kind != kStorage)
		fail("the target at " + t.addr + " sent no storage descriptor");
	t.store = new Remote(dev, desc.data(), desc.size());
}

int service(int argc, char **argv)
{
	std::string mode = argv[2], name = argv[3];
	size_t block = std::strtoul(argv[4], nullptr, 10), half = block / 2;
	bool gga = mode == "gga";
	int need = gga ? 10 : 6;

	if (argc != need || (!gga && mode != "zc") || block == 0 || block % 128 != 0)
		fail("usage: service gga NAME BLOCK TYPE EVERY A:P A:P A:P | service zc NAME BLOCK A:P");
	long every = gga ? std::atol(argv[6]) : 0;
	doca_dev *dev = open_dev_at("03:00.0");
	doca_pe *pe;
	std::vector<Target> targets(gga ? 3 : 1);

	CK(doca_pe_create(&pe));
	for (size_t i = 0; i < targets.size(); i++) {
		targets[i].addr = argv[gga ? 6 + 1 + i : 5];
		connect_target(dev, pe, targets[i]);
	}
	/* EC and DMA on the DPU. */
	doca_ec *ec = nullptr;
	doca_ec_matrix *matrix = nullptr, *recover[2] = {nullptr, nullptr};
	doca_dma *dma;

	if (gga) {
		CK(doca_ec_create(dev, &ec));
		CK(doca_ec_task_recover_set_conf(ec, on_done<doca_ec_task_recover, doca_ec_task_recover_as_task>,
						 on_done<doca_ec_task_recover, doca_ec_task_recover_as_task>, 4));
		CK(doca_pe_connect_ctx(pe, doca_ec_as_ctx(ec)));
		CK(doca_ctx_start(doca_ec_as_ctx(ec)));
		CK(doca_ec_matrix_create(ec, matrix_type(argv[5]), 2, 1, &matrix));
		for (uint32_t m = 0; m < 2; m++)
			CK(doca_ec_matrix_create_recover(ec, matrix, &m, 1, &recover[m]));
	}
	CK(doca_dma_create(dev, &dma));
	CK(doca_dma_task_memcpy_set_conf(dma, on_done<doca_dma_task_memcpy, doca_dma_task_memcpy_as_task>,
					 on_done<doca_dma_task_memcpy, doca_dma_task_memcpy_as_task>, 4));
	CK(doca_pe_connect_ctx(pe, doca_dma_as_ctx(dma)));
	CK(doca_ctx_start(doca_dma_as_ctx(dma)));
	Mem work(dev, std::vector<uint8_t>(2 * block), DOCA_ACCESS_FLAG_LOCAL_READ_WRITE);

	/* The channel to the host. */
	doca_dev_rep *rep = nullptr;
	{
		doca_devinfo_rep **reps;
		uint32_t n = 0;

		CK(doca_devinfo_rep_create_list(dev, DOCA_DEVINFO_REP_FILTER_NET, &reps, &n));
		for (uint32_t i = 0; i < n && rep == nullptr; i++) {
			uint8_t is_addr = 0;

			CK(doca_devinfo_rep_is_equal_pci_addr(reps[i], "3b:00.0", &is_addr));
			if (is_addr)
				CK(doca_dev_rep_open(reps[i], &rep));
		}
		CK(doca_devinfo_rep_destroy_list(reps));
		if (rep == nullptr)
			fail("no representor of the host");
	}
	uint32_t max_msg = 0;

	CK(doca_comch_server_create(dev, rep, name.c_str(), &server_ctx));
	CK(doca_comch_server_task_send_set_conf(server_ctx, comch_sent, comch_send_failed, 64));
	CK(doca_comch_server_event_msg_recv_register(server_ctx, msg_recv));
	CK(doca_comch_server_event_connection_status_changed_register(server_ctx, connected, disconnected));
	CK(doca_comch_cap_get_max_msg_size(doca_dev_as_devinfo(dev), &max_msg));
	CK(doca_comch_server_set_max_msg_size(server_ctx, max_msg));
	CK(doca_pe_connect_ctx(pe, doca_comch_server_as_ctx(server_ctx)));
	CK(doca_ctx_set_state_changed_cb(doca_comch_server_as_ctx(server_ctx), state_changed));
	CK(doca_ctx_start(doca_comch_server_as_ctx(server_ctx)));
	std::printf("service (%s): %zu target(s) connected, waiting for the host\n", mode.c_str(), targets.size());
	std::fflush(stdout);

	Remote *host = nullptr;
	long reads = 0, rebuilt = 0, served = 0;
	const char *names[3] = {"data-1", "data-2", "parity"};

	for (;;) {
		Msg m;
		std::vector<uint8_t> extra;
		bool timed_out;

		if (!comch_next(pe, m, &extra, 1e9, &timed_out))
			break;
		if (m.kind == kHostMem) {
			host = new Remote(dev, extra.data(), extra.size());
			if (!gga) {
				const void *desc;
				size_t n;

				/* Zero copy: the target reaches the host's memory through us. */
				CK(doca_mmap_export_rdma(host->mmap, dev, &desc, &n));
				CK(rdma_send(pe, targets[0].side, encode(make(kHostMemRdma), desc, n)));
			}
			CK(comch_send(encode(make(kReady))));
			continue;
		}
		if (m.kind != kIo || host == nullptr || m.len != block)
			fail("an unexpected request from the host");
		Msg done = make(kDone);

		done.id = m.id;
		served++;
		if (!gga) {
			/* The target moves the bytes; its answer goes back to the host. */
			Msg ans;

			if (targets[0].lost || rdma_send(pe, targets[0].side, encode(m)) != DOCA_SUCCESS ||
			    !next_msg(pe, targets[0].side, ans, nullptr, 30)) {
				done.status = DOCA_ERROR_CONNECTION_ABORTED;
				std::snprintf(done.text, sizeof(done.text), "the storage target is lost");
				if (!targets[0].lost)
					std::fprintf(stderr, "service: the storage target at %s is lost\n",
						     targets[0].addr.c_str());
				targets[0].lost = true;
			} else {
				done.status = ans.status;
				std::memcpy(done.text, ans.text, sizeof(done.text));
			}
			CK(comch_send(encode(done)));
			continue;
		}
		/* gga offload: read the halves (or rebuild one), then DMA the block to the host. */
		if (m.write) {
			done.status = DOCA_ERROR_NOT_SUPPORTED;
			std::snprintf(done.text, sizeof(done.text), "this service only reads");
			CK(comch_send(encode(done)));
			continue;
		}
		reads++;
		size_t off = m.block * half;
		int missing = -1;

		if (every > 0 && reads % every == 0)
			missing = static_cast<int>((reads / every) % 2);
		for (int i = 0; i < 2; i++)
			if (targets[i].lost)
				missing = i;
		doca_error_t status = DOCA_SUCCESS;

		for (int attempt = 0; attempt < 2 && status == DOCA_SUCCESS; attempt++) {
			/* Which targets this read needs, and where each part lands. */
			int from[2];
			size_t to[2];

			if (missing < 0) {
				from[0] = 0, to[0] = 0, from[1] = 1, to[1] = half;
			} else {
				from[0] = 1 - missing, to[0] = block, from[1] = 2, to[1] = block + half;
			}
			Result r[2];
			doca_buf *src[2], *dst[2];
			doca_rdma_task_read *t[2];
			int lost = -1;

			for (int k = 0; k < 2; k++) {
				Target &tg = targets[from[k]];
				union doca_data ud;

				if (tg.lost) {
					lost = from[k];
					break;
				}
				ud.ptr = &r[k];
				src[k] = tg.store->buf(work.inv, off, half, true);
				dst[k] = work.buf(to[k], half, false);
				CK(doca_rdma_task_read_allocate_init(tg.side.rdma, tg.side.conn, src[k], dst[k], ud, &t[k]));
				/* A connection found gone refuses the submit: that target is lost too. */
				doca_error_t sr = doca_task_submit(doca_rdma_task_read_as_task(t[k]));
				if (sr != DOCA_SUCCESS) {
					r[k].status = sr;
					r[k].done = true;
				}
			}
			if (lost >= 0) {
				status = DOCA_ERROR_CONNECTION_ABORTED;
				std::snprintf(done.text, sizeof(done.text),
					      "block %llu cannot be rebuilt: %s is lost too",
					      static_cast<unsigned long long>(m.block), names[lost]);
				break;
			}
			if (!wait_all(pe, {&r[0], &r[1]}, 30))
				fail("an RDMA read did not complete within 30 s");
			for (int k = 0; k < 2; k++) {
				doca_task_free(doca_rdma_task_read_as_task(t[k]));
				put(src[k]);
				put(dst[k]);
				if (r[k].status != DOCA_SUCCESS && !targets[from[k]].lost) {
					targets[from[k]].lost = true;
					std::fprintf(stderr,
						     "service: target %s (%s) lost (%s); its blocks are rebuilt from the others\n",
						     targets[from[k]].addr.c_str(), names[from[k]],
						     doca_error_get_name(r[k].status));
				}
				if (r[k].status != DOCA_SUCCESS)
					lost = from[k];
			}
			if (lost < 0)
				break;
			if (lost == 2 || missing >= 0) {
				status = DOCA_ERROR_CONNECTION_ABORTED;
				std::snprintf(done.text, sizeof(done.text),
					      "block %llu cannot be rebuilt: %s is lost",
					      static_cast<unsigned long long>(m.block), names[lost]);
				break;
			}
			missing = lost; /* one data target went: read the block again, rebuilding */
		}
		if (status == DOCA_SUCCESS && missing >= 0) {
			/* The surviving half and the parity (work[block..]) give the missing half. */
			doca_buf *avail = work.buf(block, block, true);
			doca_buf *out = work.buf(missing * half, half, false);
			doca_ec_task_recover *t;
			Result r;
			union doca_data ud;

			ud.ptr = &r;
			CK(doca_ec_task_recover_allocate_init(ec, recover[missing], avail, out, ud, &t));
			CK(doca_task_submit(doca_ec_task_recover_as_task(t)));
			if (!wait_all(pe, {&r}, 30))
				fail("an EC recover task did not complete within 30 s");
			doca_task_free(doca_ec_task_recover_as_task(t));
			put(avail);
			put(out);
			status = r.status;
			if (status == DOCA_SUCCESS) {
				/* The surviving half, beside the rebuilt one. */
				std::memcpy(work.bytes.data() + (1 - missing) * half, work.bytes.data() + block, half);
				rebuilt++;
			} else {
				std::snprintf(done.text, sizeof(done.text), "rebuilding block %llu failed",
					      static_cast<unsigned long long>(m.block));
			}
		}
		if (status == DOCA_SUCCESS) {
			doca_buf *src = work.buf(0, block, true);
			doca_buf *dst = host->buf(work.inv, m.host_off, block, false);
			doca_dma_task_memcpy *t;
			Result r;
			union doca_data ud;

			ud.ptr = &r;
			CK(doca_dma_task_memcpy_alloc_init(dma, src, dst, ud, &t));
			CK(doca_task_submit(doca_dma_task_memcpy_as_task(t)));
			if (!wait_all(pe, {&r}, 30))
				fail("a DMA task did not complete within 30 s");
			doca_task_free(doca_dma_task_memcpy_as_task(t));
			put(src);
			put(dst);
			status = r.status;
			if (status != DOCA_SUCCESS)
				std::snprintf(done.text, sizeof(done.text), "the DMA into the host failed");
		}
		done.status = status;
		CK(comch_send(encode(done)));
	}
	std::printf("service (%s): the host left; %ld requests, %ld blocks rebuilt by EC\n", mode.c_str(), served,
		    rebuilt);
	delete host;
	for (Target &t : targets) {
		delete t.store;
		rdma_close(pe, t.side);
	}
	doca_ctx *cc = doca_comch_server_as_ctx(server_ctx);
	Clock::time_point t0 = Clock::now();

	while (chan.state != DOCA_CTX_STATE_IDLE && since(t0) < 30) {
		(void)doca_ctx_stop(cc);
		(void)doca_pe_progress(pe);
	}
	CK(doca_comch_server_destroy(server_ctx));
	CK(doca_dev_rep_close(rep));
	CK(doca_ctx_stop(doca_dma_as_ctx(dma)));
	CK(doca_dma_destroy(dma));
	if (ec) {
		for (doca_ec_matrix *r : recover)
			CK(doca_ec_matrix_destroy(r));
		CK(doca_ec_matrix_destroy(matrix));
		CK(doca_ctx_stop(doca_ec_as_ctx(ec)));
		CK(doca_ec_destroy(ec));
	}
	CK(doca_pe_destroy(pe));
	CK(doca_dev_close(dev));
	return 0;
}
#else

/* ---- initiator (host) ---- */


[[noreturn]] void service_lost(const std::string &what)
{
	std::fprintf(stderr, "initiator: %s\n", what.c_str());
	std::exit(3);
}

uint8_t pattern(uint64_t block, long pass, size_t i)
{
	return static_cast<uint8_t>((block * 131 + static_cast<uint64_t>(pass) * 17 + i * 7 + (i >> 8)) & 0xff);
}

int initiator(int argc, char **argv)
{
	if (argc != 7)
		fail("usage: initiator NAME read FILE BLOCK PASSES | initiator NAME write-read BLOCKS BLOCK PASSES");
	std::string name = argv[2], op = argv[3];
	bool reading = op == "read";
	size_t block = std::strtoul(argv[5], nullptr, 10);
	long passes = std::atol(argv[6]);
	std::vector<uint8_t> file;
	size_t blocks;

	if (reading) {
		file = read_file(argv[4]);
		blocks = block ? file.size() / block : 0;
	} else if (op == "write-read") {
		blocks = std::strtoul(argv[4], nullptr, 10);
	} else {
		fail("the operation is read or write-read, not " + op);
	}
	if (block == 0 || blocks == 0)
		fail("no whole block to work on");
	const char *progress = std::getenv("STANDIN_PROGRESS");
	constexpr size_t kSlots = 8;
	doca_dev *dev = open_dev_at("3b:00.0");
	doca_pe *pe;
	Mem mem(dev, std::vector<uint8_t>(kSlots * block),
		DOCA_ACCESS_FLAG_LOCAL_READ_WRITE | DOCA_ACCESS_FLAG_PCI_READ_WRITE | DOCA_ACCESS_FLAG_RDMA_READ |
			DOCA_ACCESS_FLAG_RDMA_WRITE);
	const void *blob;
	size_t blob_len;
	uint32_t max_msg = 0;

	CK(doca_mmap_export_pci(mem.mmap, dev, &blob, &blob_len));
	CK(doca_pe_create(&pe));
	CK(doca_comch_client_create(dev, name.c_str(), &client_ctx));
	CK(doca_comch_client_task_send_set_conf(client_ctx, comch_sent, comch_send_failed, 64));
	CK(doca_comch_client_event_msg_recv_register(client_ctx, msg_recv));
	CK(doca_comch_cap_get_max_msg_size(doca_dev_as_devinfo(dev), &max_msg));
	CK(doca_comch_client_set_max_msg_size(client_ctx, max_msg));
	CK(doca_pe_connect_ctx(pe, doca_comch_client_as_ctx(client_ctx)));
	CK(doca_ctx_set_state_changed_cb(doca_comch_client_as_ctx(client_ctx), state_changed));
	doca_error_t r = doca_ctx_start(doca_comch_client_as_ctx(client_ctx));

	if (r != DOCA_SUCCESS && r != DOCA_ERROR_IN_PROGRESS)
		die("doca_ctx_start (comch client)", r);
	Clock::time_point t0 = Clock::now();

	while (chan.state != DOCA_CTX_STATE_RUNNING) {
		if (doca_pe_progress(pe) == 0)
			nap();
		if (since(t0) > 60)
			service_lost("no service answered on the channel within 60 s");
	}
	CK(doca_comch_client_get_connection(client_ctx, &chan.conn));
	Msg m;
	bool timed_out;

	if (comch_send(encode(make(kHostMem), blob, blob_len)) != DOCA_SUCCESS ||
	    !comch_next(pe, m, nullptr, 60, &timed_out) || m.kind != kReady)
		service_lost("the service did not take the host memory");
	long done = 0, failed = 0;
	uint32_t id = 0;
	Clock::time_point start = Clock::now();
	/* One request: sends it and waits for its answer; false when it failed. */
	auto request = [&](bool write, uint64_t b, size_t slot) {
		Msg q = make(kIo), a;

		q.id = ++id;
		q.write = write ? 1 : 0;
		q.block = b;
		q.host_off = slot * block;
		q.len = static_cast<uint32_t>(block);
		if (comch_send(encode(q)) != DOCA_SUCCESS)
			service_lost("the channel to the service failed while sending a request");
		if (!comch_next(pe, a, nullptr, 10, &timed_out)) {
			if (timed_out)
				service_lost("the service did not answer request " + std::to_string(q.id) + " within 10 s");
			service_lost("the channel to the service ended (request " + std::to_string(q.id) +
				     " unanswered)");
		}
		if (a.kind != kDone || a.id != q.id)
			fail("an answer to another request");
		if (a.status != DOCA_SUCCESS) {
			if (failed < 5)
				std::fprintf(stderr, "initiator: block %llu: %s (%s)\n",
					     static_cast<unsigned long long>(b), a.text,
					     doca_error_get_name(static_cast<doca_error_t>(a.status)));
			failed++;
			return false;
		}
		done++;
		if (progress && done % 16 == 0)
			write_file(progress, reinterpret_cast<const uint8_t *>(std::to_string(done).c_str()),
				   std::to_string(done).size());
		return true;
	};
	for (long pass = 0; pass < passes; pass++) {
		if (!reading) {
			for (uint64_t b = 0; b < blocks; b++) {
				size_t slot = b % kSlots;
				uint8_t *p = mem.bytes.data() + slot * block;

				for (size_t i = 0; i < block; i++)
					p[i] = pattern(b, pass, i);
				request(true, b, slot);
			}
		}
		for (uint64_t b = 0; b < blocks; b++) {
			size_t slot = b % kSlots;
			uint8_t *p = mem.bytes.data() + slot * block;

			std::memset(p, 0xee, block);
			if (!request(false, b, slot))
				continue;
			for (size_t i = 0; i < block; i++) {
				uint8_t want = reading ? file[b * block + i] : pattern(b, pass, i);

				if (p[i] != want) {
					std::fprintf(stderr, "initiator: block %llu, byte %zu: read %u, expected %u\n",
						     static_cast<unsigned long long>(b), i, p[i], want);
					return 1;
				}
			}
		}
		if (failed)
			break; /* the pass said what failed: no more passes */
	}
	double secs = since(start);

	std::printf("initiator: %ld requests answered in %.2f s (%.0f IOPS, %.3f GB/s), %ld failed; every block "
		    "that came back equal to what %s\n",
		    done, secs, done / secs, done * block / secs / 1e9, failed,
		    reading ? "the file holds" : "was written");
	CK(doca_ctx_stop(doca_comch_client_as_ctx(client_ctx)));
	t0 = Clock::now();
	while (chan.state != DOCA_CTX_STATE_IDLE && since(t0) < 30)
		(void)doca_pe_progress(pe);
	CK(doca_comch_client_destroy(client_ctx));
	CK(doca_pe_destroy(pe));
	CK(doca_dev_close(dev));
	return failed ? 2 : 0;
}
#endif

} // namespace

int main(int argc, char **argv)
{
	std::string role = argc > 1 ? argv[1] : "";

	std::setvbuf(stdout, nullptr, _IOLBF, 0);
	if (role == "split" && argc == 6)
		return split(argv[2], argv[3], std::strtoul(argv[4], nullptr, 10), argv[5]);
	if (role == "target" && argc == 4)
		return target(static_cast<uint16_t>(std::atoi(argv[2])), argv[3]);
#ifdef DOCA_ARCH_DPU
	if (role == "service")
		return service(argc, argv);
#else
	if (role == "initiator")
		return initiator(argc, argv);
#endif
	std::fprintf(stderr, "usage: %s split|target|service|initiator ... (see the source's head)\n", argv[0]);
	return 2;
}
