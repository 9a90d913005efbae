#pragma once

#include <QString>
#include <QStringList>

namespace cloop::testing {

// Loopback TCP traffic meddled with from creation until destruction (root;
// nftables), in a table of its own deleted at the end.
class PacketFilter
{
public:
    // New connections to `port` are reset: the first SYN only, so
    // connections already up go on.
    static PacketFilter resetNewConnections(quint16 port);
    // Every packet of the connections from local port `clientPort` (one
    // established connection) is dropped both ways, without a word: what a
    // vanished NAT or a pulled cable does to a link.
    static PacketFilter dropSilently(quint16 clientPort);
    // One packet in `every` of that connection is dropped, both ways, by
    // count (not at random): a lossy link whose loss a test can rely on.
    static PacketFilter loseOneIn(quint16 clientPort, int every);

    ~PacketFilter();
    PacketFilter(PacketFilter &&other) noexcept;
    PacketFilter(const PacketFilter &) = delete;
    PacketFilter &operator=(const PacketFilter &) = delete;
    PacketFilter &operator=(PacketFilter &&) = delete;

    // Empty once the rules are in place; else what nft said.
    const QString &error() const { return m_error; }
    // The nft table holding the rules.
    const QString &table() const { return m_table; }
    // Packets its rules dropped so far (their counters); -1 when nft
    // cannot tell.
    qint64 dropped() const;

private:
    PacketFilter(const QString &purpose, quint16 port, const QList<QStringList> &rules);

    QString m_table;
    QString m_error;
};

} // namespace cloop::testing
